// zod compiles its object parsers with `new Function` unless told not to, and first probes whether
// it may. The window's Content-Security-Policy allows no eval, so the probe is a CSP violation: the
// parsers run without it. Imported first by main.tsx, before anything parses.
import { z } from 'zod';

z.config({ jitless: true });
