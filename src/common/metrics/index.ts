export { ScrapedGauges } from './scraped-gauges';
export * from './security-counters';
