-- Webhook controls: why an endpoint was turned off (disabled_reason) and since when its attempts
-- have all failed (failing_since, for auto-disable); the secret a rotation with a grace period
-- replaced, until when it still signs; and the answers of POST /organizations/{orgId}/events by
-- Idempotency-Key (kept 24 h).
CREATE TABLE "event_idempotency_keys" (
	"organization_id" text NOT NULL,
	"key" text NOT NULL,
	"event_id" text NOT NULL,
	"response" jsonb NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "event_idempotency_keys_organization_id_key_pk" PRIMARY KEY("organization_id","key")
);
--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD COLUMN "disabled_reason" text;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD COLUMN "failing_since" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD COLUMN "previous_secret_enc" text;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD COLUMN "previous_secret_expires_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "event_idempotency_keys" ADD CONSTRAINT "event_idempotency_keys_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "event_idempotency_keys_created_idx" ON "event_idempotency_keys" USING btree ("created_at");