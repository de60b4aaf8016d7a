"""The part of JSON Schema that docs/streamcheck-json.schema.json uses, checked without a dependency:
type, const, enum, required, properties, items, minimum, allOf and $ref to #/$defs/NAME. A keyword
outside that part is an error, so the schema cannot grow past what is checked."""

KNOWN = {"$schema", "$id", "title", "description", "type", "const", "enum", "required", "properties", "items"}
KNOWN |= {"minimum", "allOf", "$ref", "$defs"}
TYPES = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
    "null": type(None),
}


def _is(value, name):
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, TYPES[name])


def errors(value, schema, root=None, where="$"):
    """Every way `value` breaks `schema`, one line each; empty when it conforms."""
    root = schema if root is None else root
    found = [f"{where}: the schema uses {k}, which this checker does not know" for k in schema if k not in KNOWN]
    if "$ref" in schema:
        name = schema["$ref"].removeprefix("#/$defs/")
        found += errors(value, root["$defs"][name], root, where)
    for part in schema.get("allOf", []):
        found += errors(value, part, root, where)
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_is(value, t) for t in types):
            return found + [f"{where}: {value!r} is not of type {schema['type']}"]
    if "const" in schema and value != schema["const"]:
        found.append(f"{where}: {value!r} is not {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        found.append(f"{where}: {value!r} is not one of {schema['enum']}")
    if "minimum" in schema and _is(value, "number") and value < schema["minimum"]:
        found.append(f"{where}: {value} is below {schema['minimum']}")
    if isinstance(value, dict):
        found += [f"{where}: {k!r} is missing" for k in schema.get("required", []) if k not in value]
        for k, sub in schema.get("properties", {}).items():
            if k in value:
                found += errors(value[k], sub, root, f"{where}.{k}")
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            found += errors(item, schema["items"], root, f"{where}[{i}]")
    return found
