ALTER TABLE "oauth_handoffs" ADD COLUMN "challenge" text;--> statement-breakpoint
ALTER TABLE "oauth_states" ADD COLUMN "handoff_challenge" text;