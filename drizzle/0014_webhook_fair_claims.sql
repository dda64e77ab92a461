-- The delivery workers claim per organization and endpoint (round robin across organizations, each
-- endpoint and organization limited to its room): the claim walks the pending deliveries grouped by
-- organization and endpoint, so one endpoint's long queue is skipped in one probe when it is at its
-- cap. The index on next_retry_at alone served the old claim, which read the queue in due order and
-- filtered out what was at its cap afterwards; nothing else reads it. Both are partial on 'pending',
-- so the new one holds the queue only, not the delivery history.
CREATE INDEX "webhook_deliveries_pending_idx" ON "webhook_deliveries" USING btree ("organization_id","endpoint_id","next_retry_at") WHERE status = 'pending';--> statement-breakpoint
DROP INDEX "webhook_deliveries_due_idx";
