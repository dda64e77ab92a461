// The web app's display helpers (web/src/ui/format.ts): devices people recognise in the sessions
// list, and a slug error in words.
import { describe, expect, it } from 'vitest';
import { device, slugProblem } from '../web/src/ui/format.js';

describe('device', () => {
  it.each([
    [
      'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36',
      'Chrome 156 on Linux',
    ],
    [
      'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0',
      'Edge 131 on Windows',
    ],
    ['Mozilla/5.0 (Macintosh; Intel Mac OS X 14.5; rv:133.0) Gecko/20100101 Firefox/133.0', 'Firefox 133 on macOS'],
    [
      'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
      'Safari 17 on iOS',
    ],
    [
      'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36',
      'Chrome 131 on Android',
    ],
    ['curl/8.5.0', 'curl/8.5.0'],
    [null, 'Unknown device'],
  ])('%s → %s', (ua, want) => {
    expect(device(ua)).toBe(want);
  });
});

describe('slugProblem', () => {
  it("says the rule in words for the API's pattern error, and keeps any other text", () => {
    expect(slugProblem('slug: must match pattern "^[a-z0-9]+(?:-[a-z0-9]+)*$"')).toMatch(/lowercase letters/);
    expect(slugProblem('This slug is taken')).toBe('This slug is taken');
    expect(slugProblem(undefined)).toBeUndefined();
  });
});
