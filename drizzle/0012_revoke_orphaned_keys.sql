-- Keys outlive their maker's place in the organization no longer: a removal, a departure or a
-- demotion below admin now revokes the maker's keys in the same transaction. Keys left behind by
-- such changes before that rule are revoked here, once: every live key whose maker is not an owner
-- or admin of its organization any more.
UPDATE "api_keys" k SET "is_active" = false, "revoked_at" = now()
WHERE k."is_active" AND k."revoked_at" IS NULL
  AND NOT EXISTS (
    SELECT 1 FROM "memberships" m
    WHERE m."organization_id" = k."organization_id" AND m."user_id" = k."created_by" AND m."role" IN ('owner', 'admin')
  );
