ALTER TABLE "api_usage" DISABLE ROW LEVEL SECURITY;--> statement-breakpoint
DROP TABLE "api_usage" CASCADE;--> statement-breakpoint
ALTER TABLE "audit_log_counters" ADD COLUMN "shard" smallint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "api_keys" DROP COLUMN "last_used_at";--> statement-breakpoint
ALTER TABLE "api_keys" DROP COLUMN "request_count";--> statement-breakpoint
ALTER TABLE "audit_log_counters" DROP CONSTRAINT "audit_log_counters_pk";
--> statement-breakpoint
ALTER TABLE "audit_log_counters" ADD CONSTRAINT "audit_log_counters_pk" PRIMARY KEY("organization_id","actor_type","actor_id","action","day","shard");