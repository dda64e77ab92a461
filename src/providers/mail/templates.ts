// Every mail the service sends, as data: a subject, an introduction, the action (a button in HTML,
// a line with the link in text) and a closing line, each with `{placeholders}`. The product's name,
// logo, colour and support address come from the branding (docs/configuration.md#branding), and
// MAIL_TEMPLATES_DIR may replace any text of any mail (docs/configuration.md#mail-templates). Every mail has a plain-text
// and an HTML body; the HTML escapes whatever it interpolates.
import type { Mail } from './mailer.js';

/** The texts of one mail. */
export interface MailTexts {
  subject: string;
  intro: string;
  action: string;
  outro: string;
}

export const MAIL_TEXT_FIELDS = ['subject', 'intro', 'action', 'outro'] as const;

/**
 * The mails, their English texts and the placeholders each may use (`appName` and `supportEmail`
 * in all of them). A replacement that names another placeholder stops the start (config/branding.ts).
 */
export const MAILS = {
  verifyEmail: {
    placeholders: [],
    en: {
      subject: 'Verify your email address',
      intro:
        'This link was asked for when a {appName} account was registered with this email address. If you registered it, confirm the address.',
      action: 'Verify email',
      outro:
        'This link expires in 24 hours. If you did not register, ignore this message: the account stays unverified. To claim this address, ask for a password reset or a sign-in link instead.',
    },
  },
  resetPassword: {
    placeholders: [],
    en: {
      subject: 'Reset your password',
      intro: 'Someone asked to reset the password of your {appName} account.',
      action: 'Reset password',
      outro:
        'This link expires in 1 hour and works once. If it was not you, ignore this message: your password stays as it is.',
    },
  },
  magicLink: {
    placeholders: [],
    en: {
      subject: 'Your sign-in link',
      intro: 'Use this link to sign in to {appName}.',
      action: 'Sign in',
      outro: 'This link expires in 15 minutes and works once. If you did not ask for it, ignore this message.',
    },
  },
  invitation: {
    placeholders: ['orgName', 'inviter', 'role'],
    en: {
      subject: 'You are invited to join {orgName} on {appName}',
      intro: '{inviter} invited you to join {orgName} as {role}.',
      action: 'Accept the invitation',
      outro: 'This invitation expires in 7 days. If you did not expect it, ignore this message.',
    },
  },
  endpointDisabled: {
    placeholders: ['orgName', 'url', 'hours'],
    en: {
      subject: 'A webhook endpoint of {orgName} was turned off',
      intro:
        'Every delivery to {url} has failed for {hours} hours, so {appName} turned the endpoint off and stopped sending to it.',
      action: 'Review the endpoint',
      outro:
        'Once the receiver answers again, turn the endpoint back on, then recover the failed deliveries to send them again.',
    },
  },
  emailChange: {
    placeholders: [],
    en: {
      subject: 'Confirm your new email address',
      intro:
        'Someone signed in to a {appName} account asked to move it to this email address. If it was you, open the link, signed in to that account, and confirm.',
      action: 'Confirm email address',
      outro:
        'This link expires in 24 hours and works once, and only for the account that asked. If it was not you, ignore this message: nothing changes.',
    },
  },
  emailChanged: {
    placeholders: ['newEmail'],
    en: {
      subject: 'The email address of your account has changed',
      intro:
        'The email address of your {appName} account is now {newEmail}. Sign-in links and mail go there from now on.',
      action: 'Open {appName}',
      outro:
        'If you did not make this change, reset your password from the new address or contact your administrator at once.',
    },
  },
  passkeyAdded: {
    placeholders: ['name'],
    en: {
      subject: 'A passkey was added to your account',
      intro:
        'A passkey named "{name}" was added to your {appName} account. It can sign in to your account from now on.',
      action: 'Review your passkeys',
      outro:
        'If you did not add it, delete it from your account page and reset your password: a reset also removes every passkey.',
    },
  },
} as const satisfies Record<string, { placeholders: readonly string[]; en: MailTexts }>;

export type MailKind = keyof typeof MAILS;
export const MAIL_KINDS = Object.keys(MAILS) as MailKind[];
/** The languages mails are written in (one catalogue each). */
export const MAIL_LANGUAGES = ['en'] as const;
export type MailLanguage = (typeof MAIL_LANGUAGES)[number];
/** Every mail may name these. */
export const COMMON_PLACEHOLDERS = ['appName', 'supportEmail'] as const;

/** What makes a mail the product's own: its name, logo, colour and support address, and replaced texts. */
export interface Branding {
  appName: string;
  logoUrl: string | null;
  /** `#rrggbb` or `#rgb`. */
  primaryColor: string;
  supportEmail: string | null;
  /** Texts that replace the built-in ones, by language and mail (MAIL_TEMPLATES_DIR). */
  mailTexts: Partial<Record<MailLanguage, Partial<Record<MailKind, Partial<MailTexts>>>>>;
}

export const DEFAULT_BRANDING: Branding = {
  appName: 'Tenantry',
  logoUrl: null,
  primaryColor: '#2f5bd3',
  supportEmail: null,
  mailTexts: {},
};

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const fill = (text: string, values: Record<string, string>) =>
  text.replace(/\{([A-Za-z]+)\}/g, (whole, name: string) => values[name] ?? whole);

type Values<K extends MailKind> = Record<(typeof MAILS)[K]['placeholders'][number], string>;

/** One mail to `to`, in the branding's words, with `link` as its action. */
export function renderMail<K extends MailKind>(
  brand: Branding,
  kind: K,
  to: string,
  link: string,
  values: Values<K>,
  language: MailLanguage = 'en',
): Mail {
  const texts = { ...MAILS[kind].en, ...brand.mailTexts.en?.[kind], ...brand.mailTexts[language]?.[kind] };
  const all: Record<string, string> = {
    ...(values as Record<string, string>),
    appName: brand.appName,
    supportEmail: brand.supportEmail ?? '',
  };
  const [subject, intro, action, outro] = MAIL_TEXT_FIELDS.map((f) => fill(texts[f], all)) as [
    string,
    string,
    string,
    string,
  ];
  const help = brand.supportEmail ? `Questions? Write to ${brand.supportEmail}.` : '';
  const header = brand.logoUrl
    ? `<p><img src="${esc(brand.logoUrl)}" alt="${esc(brand.appName)}" height="40"></p>`
    : `<p style="font-size:large;font-weight:bold">${esc(brand.appName)}</p>`;
  return {
    to,
    subject,
    text: `${intro}\n\n${action}: ${link}\n\n${outro}\n${help ? `\n${help}\n` : ''}\n${brand.appName}\n`,
    html:
      `<!doctype html><html><body style="font-family:sans-serif">${header}` +
      `<p>${esc(intro)}</p>` +
      `<p><a href="${esc(link)}" style="display:inline-block;padding:10px 16px;border-radius:6px;color:#fff;` +
      `background:${esc(brand.primaryColor)};text-decoration:none">${esc(action)}</a></p>` +
      `<p style="color:#666;font-size:small">${esc(outro)}<br>${esc(link)}</p>` +
      (help ? `<p style="color:#666;font-size:small">${esc(help)}</p>` : '') +
      `</body></html>`,
  };
}

// One function a mail, as the services call them.
export const verifyEmailMail = (b: Branding, to: string, link: string) => renderMail(b, 'verifyEmail', to, link, {});
export const resetPasswordMail = (b: Branding, to: string, link: string) =>
  renderMail(b, 'resetPassword', to, link, {});
export const magicLinkMail = (b: Branding, to: string, link: string) => renderMail(b, 'magicLink', to, link, {});
export const invitationMail = (b: Branding, to: string, orgName: string, inviter: string, role: string, link: string) =>
  renderMail(b, 'invitation', to, link, { orgName, inviter, role });
export const endpointDisabledMail = (
  b: Branding,
  to: string,
  orgName: string,
  url: string,
  hours: number,
  link: string,
) => renderMail(b, 'endpointDisabled', to, link, { orgName, url, hours: String(hours) });
export const emailChangeMail = (b: Branding, to: string, link: string) => renderMail(b, 'emailChange', to, link, {});
export const emailChangedMail = (b: Branding, to: string, newEmail: string, link: string) =>
  renderMail(b, 'emailChanged', to, link, { newEmail });
export const passkeyAddedMail = (b: Branding, to: string, name: string, link: string) =>
  renderMail(b, 'passkeyAdded', to, link, { name });
