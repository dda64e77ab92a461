ALTER TABLE "users" ADD COLUMN "checks_in_flight" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "checks_reserved_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "email_tokens" ADD COLUMN "binding" text;--> statement-breakpoint
ALTER TABLE "email_tokens" ADD COLUMN "attempts" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- The sign-in's session start also ends the sign-in's own reserved check (auth/lockout.ts), when it
-- had one: the check under way is taken off the count. The failures are cleared, but not a lock that
-- failures set (it was refused before its check if locked then).
DROP FUNCTION "tenantry_start_session"(text, text, text, text, text, timestamptz, timestamptz, json, integer);--> statement-breakpoint
CREATE FUNCTION "tenantry_start_session"(
  p_id text, p_user_id text, p_refresh_token_hash text, p_user_agent text, p_ip_address text,
  p_now timestamptz, p_expires_at timestamptz, p_touched json, p_keep integer, p_reserved boolean
) RETURNS SETOF text LANGUAGE sql VOLATILE AS $$
  SELECT 1 FROM users WHERE id = p_user_id FOR UPDATE;
  UPDATE users SET
      failed_login_attempts = CASE WHEN locked_until IS NULL OR locked_until <= p_now THEN 0 ELSE failed_login_attempts END,
      locked_until = CASE WHEN locked_until <= p_now THEN NULL ELSE locked_until END,
      checks_in_flight = CASE WHEN p_reserved THEN greatest(checks_in_flight - 1, 0) ELSE checks_in_flight END
    WHERE id = p_user_id AND (failed_login_attempts <> 0 OR locked_until IS NOT NULL OR p_reserved);
  WITH ins AS (
    INSERT INTO sessions (id, user_id, refresh_token_hash, user_agent, ip_address, last_used_at, expires_at, created_at)
    VALUES (p_id, p_user_id, p_refresh_token_hash, p_user_agent, p_ip_address, p_now, p_expires_at, p_now)
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
