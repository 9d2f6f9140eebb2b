/**
 * Provenance of memory: the moment in a tape an engram was learned (captured by extraction), `engram why`, and
 * liveness of the code an engram names, from the tape index's lineage and tombstones.
 * @module
 */
export { findMoment, momentSource, loadTapes, tapesOfSession, codeNames, namesCode, eventText, MOMENT } from './moment.js';
export { whyEngram, describeEvent } from './why.js';
export { engramDetail, pinHistory, relevanceHistory, RELEVANCE_POINTS_PER_TAG } from './detail.js';
export type { EngramDetail, RelevancePoint, RelevanceSeries, PinStep } from './detail.js';
export type { WhyReport, WhySource, MomentEvent } from './why.js';
export { checkLiveness, spanLiveness, DEAD_SHARE } from './liveness.js';
export type { LivenessReport, SpanLiveness, Death } from './liveness.js';
export { tapeFolders } from './folders.js';
export type { TapeFolder } from './folders.js';
