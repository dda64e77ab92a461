CREATE TABLE "audit_log_counts" (
	"organization_id" text PRIMARY KEY NOT NULL,
	"total" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"organization_id" text NOT NULL,
	"id" text NOT NULL,
	"name" text NOT NULL,
	"key_prefix" text NOT NULL,
	"key_hash" text NOT NULL,
	"scopes" jsonb NOT NULL,
	"rate_limit" integer,
	"is_active" boolean DEFAULT true NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"expires_at" timestamp (3) with time zone,
	"last_used_at" timestamp (3) with time zone,
	"revoked_at" timestamp (3) with time zone,
	"request_count" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "api_keys_organization_id_id_pk" PRIMARY KEY("organization_id","id")
);
--> statement-breakpoint
ALTER TABLE "audit_log_counts" ADD CONSTRAINT "audit_log_counts_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "api_keys_key_hash_key" ON "api_keys" USING btree ("key_hash");--> statement-breakpoint
CREATE INDEX "api_keys_org_created_idx" ON "api_keys" USING btree ("organization_id","created_at");--> statement-breakpoint
INSERT INTO "audit_log_counts" ("organization_id", "total") SELECT "organization_id", count(*) FROM "audit_logs" GROUP BY "organization_id" ON CONFLICT DO NOTHING;
