// The product's branding (docs/configuration.md#branding): APP_NAME, APP_LOGO_URL,
// APP_PRIMARY_COLOR, APP_SUPPORT_EMAIL, and MAIL_TEMPLATES_DIR, whose files replace the texts of
// mails. Read once at start; a file that names an unknown mail, language, field or placeholder stops
// the start naming it, so a typo never reaches a customer's inbox as `{orgname}`.
import fs from 'node:fs';
import path from 'node:path';
import {
  type Branding,
  COMMON_PLACEHOLDERS,
  DEFAULT_BRANDING,
  MAIL_KINDS,
  MAIL_LANGUAGES,
  MAIL_TEXT_FIELDS,
  MAILS,
  type MailKind,
  type MailLanguage,
  type MailTexts,
} from '../providers/mail/templates.js';
import { type Env, optional, str, url } from './env.js';
import { ConfigError } from './types.js';

const COLOR = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function parseBranding(env: Env): Branding {
  const appName = str(env, 'APP_NAME', DEFAULT_BRANDING.appName).trim();
  if (!appName || appName.length > 60 || /[\r\n<>]/.test(appName))
    throw new ConfigError('APP_NAME', 'must be 1 to 60 characters, without line breaks or < >');
  const primaryColor = str(env, 'APP_PRIMARY_COLOR', DEFAULT_BRANDING.primaryColor);
  if (!COLOR.test(primaryColor))
    throw new ConfigError('APP_PRIMARY_COLOR', `must be #rgb or #rrggbb, got "${primaryColor.slice(0, 20)}"`);
  const supportEmail = optional(env, 'APP_SUPPORT_EMAIL');
  if (supportEmail !== null && !EMAIL.test(supportEmail))
    throw new ConfigError('APP_SUPPORT_EMAIL', 'must be an email address');
  const dir = optional(env, 'MAIL_TEMPLATES_DIR');
  return {
    appName,
    logoUrl: url(env, 'APP_LOGO_URL', null, ['https:', 'http:']),
    primaryColor,
    supportEmail,
    mailTexts: dir ? readMailTexts(path.resolve(dir)) : {},
  };
}

/** `<dir>/<language>/<mail>.json`, each `{subject?, intro?, action?, outro?}`. */
function readMailTexts(dir: string): Branding['mailTexts'] {
  const refuse = (why: string) => new ConfigError('MAIL_TEMPLATES_DIR', why);
  let languages: string[];
  try {
    languages = fs.readdirSync(dir);
  } catch (err) {
    throw refuse(`cannot read ${dir}: ${(err as Error).message}`);
  }
  const out: Branding['mailTexts'] = {};
  for (const language of languages) {
    if (!(MAIL_LANGUAGES as readonly string[]).includes(language))
      throw refuse(`${language}/ is not a mail language (${MAIL_LANGUAGES.join(', ')})`);
    const byKind: Partial<Record<MailKind, Partial<MailTexts>>> = {};
    for (const file of fs.readdirSync(path.join(dir, language))) {
      const where = `${language}/${file}`;
      const kind = file.replace(/\.json$/, '');
      if (!file.endsWith('.json') || !(MAIL_KINDS as string[]).includes(kind))
        throw refuse(`${where} is not a mail (one of ${MAIL_KINDS.map((k) => `${k}.json`).join(', ')})`);
      let texts: unknown;
      try {
        texts = JSON.parse(fs.readFileSync(path.join(dir, language, file), 'utf8'));
      } catch (err) {
        throw refuse(`${where}: ${(err as Error).message}`);
      }
      byKind[kind as MailKind] = checkTexts(where, kind as MailKind, texts, refuse);
    }
    out[language as MailLanguage] = byKind;
  }
  return out;
}

function checkTexts(where: string, kind: MailKind, texts: unknown, refuse: (why: string) => Error): Partial<MailTexts> {
  if (typeof texts !== 'object' || texts === null || Array.isArray(texts))
    throw refuse(`${where}: must be a JSON object of ${MAIL_TEXT_FIELDS.join(', ')}`);
  const allowed = new Set<string>([...COMMON_PLACEHOLDERS, ...MAILS[kind].placeholders]);
  const out: Partial<MailTexts> = {};
  for (const [field, value] of Object.entries(texts)) {
    if (!(MAIL_TEXT_FIELDS as readonly string[]).includes(field))
      throw refuse(`${where}: "${field}" is not a field (${MAIL_TEXT_FIELDS.join(', ')})`);
    if (typeof value !== 'string' || !value.trim()) throw refuse(`${where}: "${field}" must be a non-empty string`);
    if (field === 'subject' && /[\r\n]/.test(value)) throw refuse(`${where}: the subject must be one line`);
    for (const [, name] of value.matchAll(/\{([^{}]*)\}/g)) {
      if (!allowed.has(name!))
        throw refuse(
          `${where}: unknown placeholder {${name}} (this mail knows ${[...allowed].map((p) => `{${p}}`).join(', ')})`,
        );
    }
    out[field as keyof MailTexts] = value;
  }
  return out;
}
