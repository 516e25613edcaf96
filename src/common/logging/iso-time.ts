/**
 * A pino `timestamp` function that writes what `pino.stdTimeFunctions.isoTime` writes
 * (`,"time":"2026-11-26T13:16:43.123Z"`), formatting the date only once a second.
 *
 * pino's own formats the whole date at every line, and `Date.prototype.toISOString` is a
 * large part of what writing a request line costs. Within one second only the milliseconds
 * change, so the text up to the seconds is kept and the milliseconds are appended. A clock that steps back just formats again.
 */
export function isoTimeBySecond(clock: () => number = Date.now): () => string {
  let second = Number.NaN;
  let prefix = '';
  return () => {
    const now = clock();
    const ms = ((now % 1000) + 1000) % 1000;
    const start = now - ms;
    if (start !== second) {
      const iso = new Date(start).toISOString();
      // Years past 9999 are written with a sign and six digits; the seconds end 5 before the end.
      prefix = `,"time":"${iso.slice(0, iso.length - 4)}`;
      second = start;
    }
    return prefix + (ms < 10 ? '00' : ms < 100 ? '0' : '') + ms + 'Z"';
  };
}
