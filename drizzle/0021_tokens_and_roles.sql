CREATE TABLE "signing_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"algorithm" text NOT NULL,
	"public_jwk" jsonb NOT NULL,
	"private_key_enc" text NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"active_from" timestamp (3) with time zone NOT NULL,
	"retires_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "organization_roles" (
	"organization_id" text NOT NULL,
	"key" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"permissions" text[] NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "organization_roles_organization_id_key_pk" PRIMARY KEY("organization_id","key")
);
--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "amr" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "active_organization_id" text;--> statement-breakpoint
ALTER TABLE "organization_roles" ADD CONSTRAINT "organization_roles_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "signing_keys_algorithm_idx" ON "signing_keys" USING btree ("algorithm","active_from");--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_active_organization_id_organizations_id_fk" FOREIGN KEY ("active_organization_id") REFERENCES "public"."organizations"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "sessions_active_organization_idx" ON "sessions" USING btree ("active_organization_id") WHERE active_organization_id is not null;--> statement-breakpoint
-- The session start records how the session signed in (amr) and the organization it starts in.
DROP FUNCTION "tenantry_start_session"(text, text, text, text, text, timestamptz, timestamptz, json, integer);--> statement-breakpoint
CREATE FUNCTION "tenantry_start_session"(
  p_id text, p_user_id text, p_refresh_token_hash text, p_user_agent text, p_ip_address text,
  p_now timestamptz, p_expires_at timestamptz, p_touched json, p_keep integer, p_amr text[], p_organization_id text
) RETURNS SETOF text LANGUAGE sql VOLATILE AS $$
  SELECT 1 FROM users WHERE id = p_user_id FOR UPDATE;
  WITH ins AS (
    INSERT INTO sessions (id, user_id, refresh_token_hash, user_agent, ip_address, last_used_at, expires_at, created_at, authenticated_at, amr, active_organization_id)
    VALUES (p_id, p_user_id, p_refresh_token_hash, p_user_agent, p_ip_address, p_now, p_expires_at, p_now, p_now, p_amr, p_organization_id)
    RETURNING id
  ),
  touched AS (SELECT * FROM json_to_recordset(p_touched) AS t(id text, at timestamptz)),
  surplus AS (
    SELECT s.id FROM sessions s LEFT JOIN touched t ON t.id = s.id
    WHERE s.user_id = p_user_id AND s.revoked_at IS NULL AND s.expires_at > p_now AND s.id <> p_id
    ORDER BY greatest(s.last_used_at, coalesce(t.at, s.last_used_at)) DESC, s.created_at DESC, s.id DESC
    OFFSET p_keep
  )
  UPDATE sessions s SET revoked_at = p_now, revoked_reason = 'session_cap'
  FROM surplus WHERE s.id = surplus.id AND s.revoked_at IS NULL AND (SELECT count(*) FROM ins) = 1
  RETURNING s.id;
$$;
