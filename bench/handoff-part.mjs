// What the batch writer keeps of a tool-call row once the row is encoded (src/pipeline/batch-writer.ts, BatchWriter.add).
export function accountingPart(r) {
  return { event_id: r.event_id, ts: r.ts, harness: r.harness, session_id: r.session_id, agent_id: r.agent_id, host: r.host, device_id: r.device_id, turn_id: r.turn_id, model: r.model, images: r.images, output_bytes: r.output_bytes, source: r.source };
}
