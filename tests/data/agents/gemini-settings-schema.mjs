// Writes, as JSON Schema, what Gemini CLI's own settings validator accepts for the `hooks`
// and `hooksConfig` keys of settings.json: it reads SETTINGS_SCHEMA (getSettingsSchema()) and
// the HookDefinitionArray definition from the installed bundle and converts them the way the
// bundle builds its zod validator (objects let unknown keys through, numbers are numbers).
//
//   node gemini-settings-schema.mjs <gemini-cli>/bundle > gemini-<version>-settings-hooks.schema.json
import fs from "node:fs";
import path from "node:path";

const bundle = process.argv[2];
const chunk = fs.readdirSync(bundle).filter((name) => name.endsWith(".js")).find((name) => {
  const text = fs.readFileSync(path.join(bundle, name), "utf8");
  return text.includes("function getSettingsSchema()") && text.includes("  HookDefinitionArray: {");
});
const source = fs.readFileSync(path.join(bundle, chunk), "utf8");
const { getSettingsSchema } = await import(path.join(bundle, chunk));

function literal(text, start) {  // the object literal that opens at text[start] ("{")
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    if (text[i] === "{") depth++;
    if (text[i] === "}" && --depth === 0) return new Function(`return (${text.slice(start, i + 1)})`)();
  }
  throw new Error("unbalanced literal");
}
const definitions = {
  HookDefinitionArray: literal(source, source.indexOf("{", source.indexOf("  HookDefinitionArray: {"))),
};

function fromJsonSchema(def) {  // buildZodSchemaFromJsonSchema
  if (def.type === "object") {
    const out = { type: "object", properties: {} };
    for (const [key, prop] of Object.entries(def.properties ?? {})) out.properties[key] = fromJsonSchema(prop);
    if (def.required) out.required = def.required;
    if (def.additionalProperties === false) out.additionalProperties = false;
    return out;
  }
  if (def.type === "array") return { type: "array", items: def.items ? fromJsonSchema(def.items) : {} };
  if (["string", "number", "boolean"].includes(def.type)) return def.enum ? { type: def.type, enum: def.enum } : { type: def.type };
  return {};
}
function fromCollection(def) {  // buildZodSchemaFromCollection
  if (def.ref) return fromJsonSchema(definitions[def.ref]);
  return fromSetting(def);
}
function fromSetting(def) {  // buildZodSchemaFromDefinition
  if (def.ref) return fromJsonSchema(definitions[def.ref]);
  if (["string", "number", "boolean"].includes(def.type)) return { type: def.type };
  if (def.type === "array") return { type: "array", items: def.items ? fromCollection(def.items) : {} };
  if (def.type === "object") {
    const out = { type: "object", properties: {} };
    for (const [key, prop] of Object.entries(def.properties ?? {})) out.properties[key] = fromSetting(prop);
    return out;
  }
  return {};
}
const settings = getSettingsSchema();
console.log(JSON.stringify({
  $schema: "http://json-schema.org/draft-07/schema#",
  title: "Gemini CLI settings.json: hooks and hooksConfig, as its settings validator accepts them",
  type: "object",
  properties: { hooks: fromSetting(settings.hooks), hooksConfig: fromSetting(settings.hooksConfig) },
}, null, 2));
process.exit(0);
