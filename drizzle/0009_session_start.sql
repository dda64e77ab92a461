-- A sign-in's new session in ONE round trip (sessions.ts, start): what was BEGIN, the user lock, the
-- insert with the revocation of the sessions beyond the cap, and COMMIT. A VOLATILE SQL function
-- takes a fresh snapshot for each statement, so the second statement, run after the user row lock is
-- held, sees every session a parallel sign-in of the same user committed before it (as the
-- transaction's second statement did).
CREATE FUNCTION "tenantry_start_session"(
  p_id text, p_user_id text, p_refresh_token_hash text, p_user_agent text, p_ip_address text,
  p_now timestamptz, p_expires_at timestamptz, p_touched json, p_keep integer
) RETURNS SETOF text LANGUAGE sql VOLATILE AS $$
  SELECT 1 FROM users WHERE id = p_user_id FOR UPDATE;
  -- A sign-in clears the failures that count toward the lockout, but not a lock that parallel
  -- failures set while its password was being checked (it was refused before its check if locked).
  UPDATE users SET failed_login_attempts = 0, locked_until = NULL
    WHERE id = p_user_id AND (failed_login_attempts <> 0 OR locked_until IS NOT NULL)
      AND (locked_until IS NULL OR locked_until <= p_now);
  WITH ins AS (
    INSERT INTO sessions (id, user_id, refresh_token_hash, user_agent, ip_address, last_used_at, expires_at, created_at)
    VALUES (p_id, p_user_id, p_refresh_token_hash, p_user_agent, p_ip_address, p_now, p_expires_at, p_now)
    RETURNING id
  ),
  -- Recency counts the touches not yet written (p_touched: [{id, at}]); the new session never goes.
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
