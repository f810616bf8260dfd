import type Database from 'better-sqlite3';

/** Runs matching optional model/GPU/format filters and exact knob values (a JSON object of knob → value). */
const RUN_FILTER_SQL = `
  (@model IS NULL OR model = @model)
  AND (@gpu IS NULL OR gpu = @gpu)
  AND (@gpu_count IS NULL OR gpu_count = @gpu_count)
  AND (@source_format IS NULL OR source_format = @source_format)
  AND NOT EXISTS (
    SELECT 1 FROM json_each(@config) f
    WHERE json_extract(runs.server_config, '$."' || f.key || '"') IS NOT f.value
  )`;

/** Every statement of the SQLite store, prepared once per connection. */
export function prepare(db: Database.Database) {
  return {
    insertStudy: db.prepare(
      `INSERT INTO studies (name, state, spec, created_at_ms, updated_at_ms) VALUES (@name, 'created', @spec, @now, @now)`,
    ),
    studyById: db.prepare(`SELECT * FROM studies WHERE id = ?`),
    studyByName: db.prepare(`SELECT * FROM studies WHERE name = ?`),
    allStudies: db.prepare(`SELECT * FROM studies ORDER BY id`),
    updateStudyState: db.prepare(`UPDATE studies SET state = @state, updated_at_ms = @now WHERE id = @id`),

    nextNumber: db.prepare(`SELECT COALESCE(MAX(number) + 1, 0) AS n FROM trials WHERE study_id = ?`),
    insertTrial: db.prepare(
      `INSERT INTO trials (study_id, number, state, origin, config, attrs, created_at_ms, started_at_ms, heartbeat_at_ms)
       VALUES (@study, @number, @state, @origin, @config, @attrs, @now, @started_at, @started_at)`,
    ),
    trialById: db.prepare(`SELECT * FROM trials WHERE id = ?`),
    trialValues: db.prepare(`SELECT * FROM trial_values WHERE trial_id = ?`),
    studyTrials: db.prepare(
      `SELECT * FROM trials WHERE study_id = @study
       AND (@states IS NULL OR state IN (SELECT value FROM json_each(@states))) ORDER BY number`,
    ),
    studyValues: db.prepare(
      `SELECT v.* FROM trial_values v JOIN trials t ON t.id = v.trial_id WHERE t.study_id = ?`,
    ),
    oldestWaiting: db.prepare(`SELECT id FROM trials WHERE study_id = ? AND state = 'waiting' ORDER BY number LIMIT 1`),
    startTrial: db.prepare(`UPDATE trials SET state = 'running', started_at_ms = @now, heartbeat_at_ms = @now WHERE id = @id`),
    heartbeat: db.prepare(`UPDATE trials SET heartbeat_at_ms = @now WHERE id = @id`),
    updateAttrs: db.prepare(`UPDATE trials SET attrs = @attrs WHERE id = @id`),
    finishTrial: db.prepare(
      `UPDATE trials SET state = @state, result = @result, failure_reason = @reason, started = @started, finished_at_ms = @now
       WHERE id = @id`,
    ),
    deleteValues: db.prepare(`DELETE FROM trial_values WHERE trial_id = ?`),
    insertValue: db.prepare(
      `INSERT INTO trial_values (trial_id, objective, value, value_type) VALUES (@trial, @objective, @value, @type)`,
    ),
    staleRunning: db.prepare(
      `SELECT id FROM trials WHERE study_id = @study AND state = 'running'
       AND COALESCE(heartbeat_at_ms, started_at_ms, created_at_ms) < @before ORDER BY number`,
    ),

    insertRun: db.prepare(
      `INSERT INTO runs (content_hash, source_format, source_path, model, gpu, gpu_count, server_config, workload, result, meta, created_at_ms)
       VALUES (@content_hash, @source_format, @source_path, @model, @gpu, @gpu_count, @server_config, @workload, @result, @meta, @now)
       ON CONFLICT (content_hash) DO NOTHING`,
    ),
    runById: db.prepare(`SELECT * FROM runs WHERE id = ?`),
    runByHash: db.prepare(`SELECT * FROM runs WHERE content_hash = ?`),
    replaceRunContext: db.prepare(
      `UPDATE runs SET model = @model, gpu = @gpu, gpu_count = @gpu_count, server_config = @server_config, result = @result, meta = @meta
       WHERE id = @id`,
    ),
    listRuns: db.prepare(`SELECT * FROM runs WHERE ${RUN_FILTER_SQL} ORDER BY id DESC LIMIT @limit OFFSET @offset`),
    countRuns: db.prepare(`SELECT COUNT(*) AS n FROM runs WHERE ${RUN_FILTER_SQL}`),

    insertModel: db.prepare(
      `INSERT INTO models (kind, slot, blob, metadata, metrics, size_bytes, created_at_ms) VALUES (@kind, @slot, @blob, @metadata, @metrics, @size, @now)`,
    ),
    modelById: db.prepare(`SELECT * FROM models WHERE id = ?`),
    clearModelSlot: db.prepare(`DELETE FROM models WHERE slot = ?`),
    latestModel: db.prepare(`SELECT * FROM models WHERE kind = ? ORDER BY id DESC LIMIT 1`),
    listModels: db.prepare(
      `SELECT id, kind, slot, metadata, metrics, size_bytes, created_at_ms FROM models WHERE (@kind IS NULL OR kind = @kind) ORDER BY id DESC`,
    ),

    modelSpecById: db.prepare(`SELECT * FROM model_specs WHERE id = ?`),
    insertModelSpec: db.prepare(
      `INSERT INTO model_specs (id, spec, config_hash, origin, location, created_at_ms) VALUES (@id, @spec, @hash, @origin, @location, @now)`,
    ),
    allModelSpecs: db.prepare(`SELECT * FROM model_specs ORDER BY created_at_ms, rowid`),

    insertEvent: db.prepare(`INSERT INTO events (study_id, kind, payload, at_ms) VALUES (@study, @kind, @payload, @now)`),
    eventById: db.prepare(`SELECT * FROM events WHERE id = ?`),
    listEvents: db.prepare(
      `SELECT * FROM events WHERE (@anyStudy = 1 OR study_id IS @study)
       AND (@kind IS NULL OR kind = @kind) AND (@after IS NULL OR id > @after) ORDER BY id LIMIT @limit`,
    ),
  };
}


export type Statements = ReturnType<typeof prepare>;
