// Part 1 of the shared security table (test/security.ts): every case against each of its rows, on an
// app, an account and fixtures of its own. The parts are separate files so that they run in parallel.
import { describeSecurityTablePart } from './security.js';

await describeSecurityTablePart(1);
