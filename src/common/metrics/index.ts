export * from './security-counters';
export { ScrapedGauges } from './scraped-gauges';
