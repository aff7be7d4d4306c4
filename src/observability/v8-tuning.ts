import v8 from 'node:v8';

/**
 * Imported first by main.ts, before any other module runs.
 *
 * V8's allocation-site pretenuring sometimes decided, early in a process's life, that an allocation site on the
 * forwarding path makes long-lived objects and moved its objects straight into the old generation. They die at once,
 * so V8 then ran back-to-back full collections for the rest of the process's life. In 7 of 25 observed process
 * starts, this doubled kapi's CPU per forwarded request (npm run bench: 100–125 µs instead of 55–60 µs at
 * concurrency 16). Without pretenuring, 14 starts out of 14 stayed fast. NODE_OPTIONS does not accept this V8 flag,
 * so it is set here, where every way of starting kapi (image, chart, npm start, bench) passes.
 */
v8.setFlagsFromString('--no-allocation-site-pretenuring');
