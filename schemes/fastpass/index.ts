/** The fastpass scheme: its definition (settings, plan, summary, experiments; its node-process parts by module). */
export { default } from './orchestrator/index.js';
