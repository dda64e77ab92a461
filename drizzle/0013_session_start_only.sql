-- The session start is only the session start again: the user row locked (so parallel sign-ins of one
-- user count each other's sessions), the insert, and the revocation of the sessions beyond the cap.
-- Clearing the lockout's failures and ending the sign-in's reserved check moved to the sign-in
-- sequence (src/modules/auth/sign-in.ts, passCheck), the one home of the lockout rule.
DROP FUNCTION "tenantry_start_session"(text, text, text, text, text, timestamptz, timestamptz, json, integer, boolean);--> statement-breakpoint
CREATE FUNCTION "tenantry_start_session"(
  p_id text, p_user_id text, p_refresh_token_hash text, p_user_agent text, p_ip_address text,
  p_now timestamptz, p_expires_at timestamptz, p_touched json, p_keep integer
) RETURNS SETOF text LANGUAGE sql VOLATILE AS $$
  SELECT 1 FROM users WHERE id = p_user_id FOR UPDATE;
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
