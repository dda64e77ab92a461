// Every mail has a plain-text and an HTML body; the HTML escapes whatever it interpolates.
import type { Mail } from './mailer.js';

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function build(to: string, subject: string, intro: string, action: string, link: string, outro: string): Mail {
  return {
    to,
    subject,
    text: `${intro}\n\n${action}: ${link}\n\n${outro}\n`,
    html:
      `<!doctype html><html><body style="font-family:sans-serif">` +
      `<p>${esc(intro)}</p><p><a href="${esc(link)}">${esc(action)}</a></p>` +
      `<p style="color:#666;font-size:small">${esc(outro)}<br>${esc(link)}</p></body></html>`,
  };
}

export const verifyEmailMail = (to: string, link: string) =>
  build(
    to,
    'Verify your email address',
    'This link was asked for when a Tenantry account was registered with this email address. If you registered it, confirm the address.',
    'Verify email',
    link,
    'This link expires in 24 hours. If you did not register, ignore this message: the account stays unverified. To claim this address, ask for a password reset or a sign-in link instead.',
  );

export const resetPasswordMail = (to: string, link: string) =>
  build(
    to,
    'Reset your password',
    'Someone asked to reset the password of your Tenantry account.',
    'Reset password',
    link,
    'This link expires in 1 hour and works once. If it was not you, ignore this message: your password stays as it is.',
  );

export const magicLinkMail = (to: string, link: string) =>
  build(
    to,
    'Your sign-in link',
    'Use this link to sign in to Tenantry.',
    'Sign in',
    link,
    'This link expires in 15 minutes and works once. If you did not ask for it, ignore this message.',
  );

export const invitationMail = (to: string, orgName: string, inviter: string, role: string, link: string) =>
  build(
    to,
    `You are invited to join ${orgName} on Tenantry`,
    `${inviter} invited you to join ${orgName} as ${role}.`,
    'Accept the invitation',
    link,
    'This invitation expires in 7 days. If you did not expect it, ignore this message.',
  );

export const endpointDisabledMail = (to: string, orgName: string, url: string, hours: number, link: string) =>
  build(
    to,
    `A webhook endpoint of ${orgName} was turned off`,
    `Every delivery to ${url} has failed for ${hours} hours, so Tenantry turned the endpoint off and stopped sending to it.`,
    'Review the endpoint',
    link,
    'Once the receiver answers again, turn the endpoint back on, then recover the failed deliveries to send them again.',
  );

export const emailChangeMail = (to: string, link: string) =>
  build(
    to,
    'Confirm your new email address',
    'Someone signed in to a Tenantry account asked to move it to this email address. If it was you, open the link, signed in to that account, and confirm.',
    'Confirm email address',
    link,
    'This link expires in 24 hours and works once, and only for the account that asked. If it was not you, ignore this message: nothing changes.',
  );

export const emailChangedMail = (to: string, newEmail: string, link: string) =>
  build(
    to,
    'The email address of your account has changed',
    `The email address of your Tenantry account is now ${newEmail}. Sign-in links and mail go there from now on.`,
    'Open Tenantry',
    link,
    'If you did not make this change, reset your password from the new address or contact your administrator at once.',
  );

export const passkeyAddedMail = (to: string, name: string, link: string) =>
  build(
    to,
    'A passkey was added to your account',
    `A passkey named "${name}" was added to your Tenantry account. It can sign in to your account from now on.`,
    'Review your passkeys',
    link,
    'If you did not add it, delete it from your account page and reset your password: a reset also removes every passkey.',
  );
