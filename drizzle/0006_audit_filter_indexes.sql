DROP INDEX "audit_logs_org_actor_idx";--> statement-breakpoint
DROP INDEX "audit_logs_org_action_idx";--> statement-breakpoint
CREATE INDEX "audit_logs_org_actor_created_idx" ON "audit_logs" USING btree ("organization_id","actor_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "audit_logs_org_action_created_idx" ON "audit_logs" USING btree ("organization_id","action","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);