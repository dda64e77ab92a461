-- When a session last proved its person: its sign-in, or a later POST /auth/reauthenticate (a refresh
-- never moves it). Sessions that exist already count from their sign-in, which is their created_at.
ALTER TABLE "sessions" ADD COLUMN "authenticated_at" timestamp (3) with time zone;--> statement-breakpoint
UPDATE "sessions" SET "authenticated_at" = "created_at";--> statement-breakpoint
ALTER TABLE "sessions" ALTER COLUMN "authenticated_at" SET NOT NULL;--> statement-breakpoint
-- An authentication challenge asked for with an email is answered only by that account's passkeys
-- (none when the address is unknown or deactivated).
ALTER TABLE "webauthn_challenges" ADD COLUMN "by_email" boolean DEFAULT false NOT NULL;--> statement-breakpoint
-- The session start as in 0013, now also writing authenticated_at: a sign-in is a proof.
CREATE OR REPLACE FUNCTION "tenantry_start_session"(
  p_id text, p_user_id text, p_refresh_token_hash text, p_user_agent text, p_ip_address text,
  p_now timestamptz, p_expires_at timestamptz, p_touched json, p_keep integer
) RETURNS SETOF text LANGUAGE sql VOLATILE AS $$
  SELECT 1 FROM users WHERE id = p_user_id FOR UPDATE;
  WITH ins AS (
    INSERT INTO sessions (id, user_id, refresh_token_hash, user_agent, ip_address, last_used_at, expires_at, created_at, authenticated_at)
    VALUES (p_id, p_user_id, p_refresh_token_hash, p_user_agent, p_ip_address, p_now, p_expires_at, p_now, p_now)
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
