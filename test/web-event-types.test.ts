// The endpoint form of the web app offers the event catalogue as it is.
import { expect, it } from 'vitest';
import { EVENT_TYPES } from '../src/platform/event-catalogue.js';
import { EVENT_TYPES as OFFERED } from '../web/src/pages/console/event-types.js';

it("the web app's endpoint form offers every built-in event type, and no other", () => {
  expect([...OFFERED].sort()).toEqual([...EVENT_TYPES].sort());
});
