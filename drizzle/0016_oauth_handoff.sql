-- The social sign-in hand-off to the web app (docs/api.md#social-sign-in): a flow started with
-- redirectTo keeps that page with its state (oauth_states.redirect_to), and its callback redirects
-- there with a one-time code whose SHA-256 oauth_handoffs keeps (single use, 60 seconds, gone with
-- its user) until POST /auth/oauth/exchange turns it into the sign-in's answer.
CREATE TABLE "oauth_handoffs" (
	"code_hash" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "oauth_states" ADD COLUMN "redirect_to" text;--> statement-breakpoint
ALTER TABLE "oauth_handoffs" ADD CONSTRAINT "oauth_handoffs_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;