export { ingestBuffer, ingestOne, contentHash, DEFAULT_MAX_FILE_BYTES } from './ingest.js';
export type { IngestOptions, IngestSummary, FileReport, Rejection, IngestInput, LoadedFile } from './ingest.js';
export { ingestFiles, expandPaths, findSidecar, DIR_SIDECAR } from './files.js';
export { parseSidecar, resolveRun, Sidecar, type IngestContext, type SidecarInfo } from './context.js';
export { parseFile } from './parse-file.js';
export type { ParsedFile, ParsedRun, FileHints } from './parsed.js';
export { decodeText, parseJsonDocuments, quoteNonFinite } from './json-text.js';
export { StoredRun, contextJudge, replacedNotes, storedRun } from './stored.js';
export type { PassedOver } from './parsed.js';
