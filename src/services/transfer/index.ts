export { exportEngrams, exportLine, ExportLineSchema } from './export.js';
export type { ExportLine, ExportOptions } from './export.js';
export { importEngrams } from './import.js';
export type { ImportReport, ImportOptions, LineError } from './import.js';
