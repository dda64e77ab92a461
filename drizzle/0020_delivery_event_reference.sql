-- A delivery references its event's body instead of carrying a copy of it: the body every attempt
-- sends is {id, type, timestamp, data} of the event row (timestamp: its created_at), stored once
-- however many endpoints the event goes to. The worker's claim reads it with a join.
--
-- Every delivery recorded so far has its event row (both were written in one transaction, with the
-- same type, data and time, and retention deletes an event only once no delivery is left). Should
-- one be missing all the same, it is recreated from the delivery's copy first, so no delivery loses
-- its body; then the foreign key holds the rule for good and the copies go.
INSERT INTO "events" ("organization_id", "id", "type", "data", "created_at")
SELECT DISTINCT ON (d."organization_id", d."event_id") d."organization_id", d."event_id",
  coalesce(d."payload"->>'type', d."event_type"), coalesce(d."payload"->'data', '{}'::jsonb),
  coalesce((d."payload"->>'timestamp')::timestamptz, d."created_at")
FROM "webhook_deliveries" d
WHERE NOT EXISTS (SELECT 1 FROM "events" e WHERE e."organization_id" = d."organization_id" AND e."id" = d."event_id")
ORDER BY d."organization_id", d."event_id", d."created_at";--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_event_fk" FOREIGN KEY ("organization_id","event_id") REFERENCES "public"."events"("organization_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" DROP COLUMN "payload";
