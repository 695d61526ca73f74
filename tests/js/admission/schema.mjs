// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Offline validation of Kubernetes manifests against the API's schemas, as
// the npm package kubernetes-models ships them (generated from the
// Kubernetes OpenAPI, admissionregistration.k8s.io/v1 included):
//   - its validate(): types, enums, required fields, formats;
//   - unknown fields, which the API server refuses under strict field
//     validation (kubectl's default) but validate() lets through: checked
//     against the same models' field lists (their .d.ts interfaces, one per
//     API type), recursively.
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(import.meta.url);
const MODELS = path.dirname(require.resolve("kubernetes-models/package.json"));
const NODE_MODULES = path.dirname(MODELS);

// "apps/v1" -> kubernetes-models/apps/v1; "v1" -> kubernetes-models/v1.
function modelDir(apiVersion) {
	const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
	return path.join(MODELS, group, version);
}

export async function validateSchema(obj) {
	const dir = modelDir(obj.apiVersion);
	const file = path.join(dir, `${obj.kind}.mjs`);
	if (!existsSync(file)) throw new Error(`${obj.apiVersion} ${obj.kind}: no schema in kubernetes-models`);
	const mod = await import(file);
	new mod[obj.kind](obj).validate();
	checkFields(obj, { kind: "interface", file: path.join(dir, `${obj.kind}.d.ts`) }, `${obj.kind}`);
}

const interfaces = new Map();

// The fields of the first interface a .d.ts declares: name -> type.
function fieldsOf(file) {
	if (interfaces.has(file)) return interfaces.get(file);
	const text = readFileSync(file, "utf8");
	const imports = new Map();
	for (const m of text.matchAll(/^import \{ (\w+) \} from "([^"]+)";$/gm)) {
		const spec = m[2];
		const base = spec.startsWith(".") ? path.resolve(path.dirname(file), spec) : path.join(NODE_MODULES, spec);
		imports.set(m[1], `${base}.d.ts`);
	}
	const body = text.match(/^export interface \w+[^{]*\{\n([\s\S]*?)^\}/m);
	let fields = null;
	if (body) {
		fields = new Map();
		const lines = body[1].split("\n");
		for (let i = 0; i < lines.length; i++) {
			const m = lines[i].match(/^ {4}"([^"]+)"\??: (.+?);?$/);
			if (!m) continue;
			let type = m[2];
			if (type === "{") {
				// a map: "    name?: {\n        [key: string]: T;\n    };"
				const v = lines[++i].match(/^\s+\[key: string\]: (.+?);$/);
				type = { kind: "map", of: resolve(v ? v[1] : "any", imports) };
				while (!/^ {4}\};?$/.test(lines[i])) i++;
			} else {
				type = resolve(type, imports);
			}
			fields.set(m[1], type);
		}
	}
	interfaces.set(file, fields);
	return fields;
}

function resolve(type, imports) {
	const list = type.match(/^Array<(.+)>$/);
	if (list) return { kind: "list", of: resolve(list[1], imports) };
	if (imports.has(type)) return { kind: "interface", file: imports.get(type) };
	return { kind: "leaf" }; // string, number, boolean, literals, int-or-string, free-form
}

function checkFields(value, type, where) {
	if (value === null || typeof value !== "object") return;
	if (type.kind === "list") {
		if (Array.isArray(value)) value.forEach((v, i) => checkFields(v, type.of, `${where}[${i}]`));
		return;
	}
	if (type.kind === "map") {
		for (const [k, v] of Object.entries(value)) checkFields(v, type.of, `${where}.${k}`);
		return;
	}
	if (type.kind !== "interface" || Array.isArray(value)) return;
	const fields = existsSync(type.file) ? fieldsOf(type.file) : null;
	if (!fields) return; // a type alias (Time, Quantity, ...): validate() checked it
	for (const [k, v] of Object.entries(value)) {
		if (!fields.has(k)) throw new Error(`${where}.${k}: unknown field (known: ${[...fields.keys()].join(", ")})`);
		checkFields(v, fields.get(k), `${where}.${k}`);
	}
}
