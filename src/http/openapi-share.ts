// The error responses of the document are mostly the same from one operation to the next (the
// pipeline's codes, and each area's own). Once the document is generated, what several operations
// share moves to #/components once and each operation keeps a reference: examples first
// (#/components/examples), then whole error responses (#/components/responses). Names are derived
// from the content, so they do not depend on the order of the routes.

interface Media {
  examples?: Record<string, unknown>;
}
interface Operation {
  responses?: Record<string, { content?: Record<string, Media> } & Record<string, unknown>>;
}
export interface OpenApiDocument {
  paths?: Record<string, Record<string, Operation>>;
  components?: Record<string, unknown>;
}

const slug = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 60);

function* operations(doc: OpenApiDocument): Generator<Operation> {
  for (const item of Object.values(doc.paths ?? {})) yield* Object.values(item);
}

/** Moves the examples found more than once to #/components/examples. */
function shareExamples(doc: OpenApiDocument): Record<string, unknown> {
  const uses: Array<{ examples: Record<string, unknown>; key: string; json: string }> = [];
  for (const op of operations(doc)) {
    for (const response of Object.values(op.responses ?? {})) {
      for (const media of Object.values(response.content ?? {})) {
        for (const [key, example] of Object.entries(media.examples ?? {}))
          uses.push({ examples: media.examples!, key, json: JSON.stringify(example) });
      }
    }
  }
  const count = new Map<string, number>();
  for (const u of uses) count.set(u.json, (count.get(u.json) ?? 0) + 1);
  // The most frequent example of a key is named after the key; the others add their message (and details).
  const shared = [
    ...new Map(uses.filter((u) => count.get(u.json)! > 1).map((u) => [`${u.key}\n${u.json}`, u])).values(),
  ].sort(
    (a, b) => a.key.localeCompare(b.key) || count.get(b.json)! - count.get(a.json)! || a.json.localeCompare(b.json),
  );
  const names = new Map<string, string>();
  const out: Record<string, unknown> = {};
  for (const { key, json } of shared) {
    const error = (JSON.parse(json) as { value?: { error?: { message?: string; details?: string } } }).value?.error;
    let name = key;
    if (name in out) name = `${key}.${slug(error?.message ?? '')}`;
    if (name in out) name = `${key}.${slug(`${error?.message ?? ''} ${error?.details ?? ''}`)}`;
    for (let i = 2; name in out; i++) name = `${key}.${slug(error?.message ?? '')}-${i}`;
    out[name] = JSON.parse(json);
    names.set(`${key}\n${json}`, name);
  }
  for (const u of uses) {
    const name = names.get(`${u.key}\n${u.json}`);
    if (name) u.examples[u.key] = { $ref: `#/components/examples/${name}` };
  }
  return out;
}

/** Moves the error responses found more than once to #/components/responses, named by status and examples. */
function shareResponses(doc: OpenApiDocument): Record<string, unknown> {
  const uses: Array<{ responses: Record<string, unknown>; status: string; json: string }> = [];
  for (const op of operations(doc)) {
    for (const [status, response] of Object.entries(op.responses ?? {})) {
      if (Number(status) >= 400) uses.push({ responses: op.responses!, status, json: JSON.stringify(response) });
    }
  }
  const count = new Map<string, number>();
  for (const u of uses) count.set(u.json, (count.get(u.json) ?? 0) + 1);
  const out: Record<string, unknown> = {};
  const names = new Map<string, string>();
  for (const json of [...new Set(uses.map((u) => u.json))].filter((j) => count.get(j)! > 1).sort()) {
    const response = JSON.parse(json) as { content?: Record<string, Media> };
    // Named after its examples: the shared example's name, else the key.
    const keys = Object.values(response.content ?? {}).flatMap((m) =>
      Object.entries(m.examples ?? {}).map(([key, e]) => (e as { $ref?: string }).$ref?.split('/').pop() ?? key),
    );
    const status = uses.find((u) => u.json === json)!.status;
    let name = `${status}_${keys.join('_')}`;
    for (let i = 2; name in out; i++) name = `${status}_${keys.join('_')}_${i}`;
    out[name] = response;
    names.set(json, name);
  }
  for (const u of uses) {
    const name = names.get(u.json);
    if (name) u.responses[u.status] = { $ref: `#/components/responses/${name}` };
  }
  return out;
}

export function shareErrorResponses(doc: OpenApiDocument): OpenApiDocument {
  const examples = shareExamples(doc);
  const responses = shareResponses(doc);
  doc.components = {
    ...doc.components,
    ...(Object.keys(responses).length > 0 ? { responses } : {}),
    ...(Object.keys(examples).length > 0 ? { examples } : {}),
  };
  return doc;
}
