export * from './fmp4-boxes.js';
