// Display helpers.
export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

export const count = (n: number | null | undefined) =>
  n === null || n === undefined ? 'unlimited' : n.toLocaleString();

/** A slug from a name: lowercase letters and digits joined by single dashes, 50 characters at most. */
export function slugify(name: string): string {
  return name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 50)
    .replace(/-+$/, '');
}

/**
 * A browser and system people recognise ("Chrome 156 on Linux") from a User-Agent; the text itself
 * when neither is known. The order matters: Edge and Opera also say Chrome, Chrome also says Safari.
 */
export function device(userAgent: string | null | undefined): string {
  if (!userAgent) return 'Unknown device';
  const browsers: Array<[RegExp, string]> = [
    [/Edg(?:e|A|iOS)?\/(\d+)/, 'Edge'],
    [/OPR\/(\d+)/, 'Opera'],
    [/Firefox\/(\d+)/, 'Firefox'],
    [/(?:Headless)?Chrom(?:e|ium)\/(\d+)/, 'Chrome'],
    [/Version\/(\d+)[\d.]* (?:Mobile\/\S+ )?Safari\//, 'Safari'],
  ];
  const systems: Array<[RegExp, string]> = [
    [/Android/, 'Android'],
    [/iPhone|iPad|iPod/, 'iOS'],
    [/Windows/, 'Windows'],
    [/Mac OS X|Macintosh/, 'macOS'],
    [/CrOS/, 'ChromeOS'],
    [/Linux/, 'Linux'],
  ];
  const browser = browsers.find(([re]) => re.test(userAgent));
  const system = systems.find(([re]) => re.test(userAgent))?.[1];
  if (!browser && !system) return userAgent.length > 60 ? `${userAgent.slice(0, 57)}…` : userAgent;
  const name = browser ? `${browser[1]} ${browser[0].exec(userAgent)![1]}` : 'A browser';
  return system ? `${name} on ${system}` : name;
}

/** A slug API error in words (the API names the pattern it did not match). */
export function slugProblem(text: string | undefined): string | undefined {
  return text && /pattern/.test(text)
    ? 'Use lowercase letters and digits, with single dashes between words (for example acme-inc).'
    : text;
}
