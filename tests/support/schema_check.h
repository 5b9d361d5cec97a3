// A JSON schema validator for the subset ember converts to grammars
// (runtime/constrain/json_schema.h), written from the JSON schema spec, so the
// tests can check generated documents against their schemas without Python.
// (scripts/validate_schema_outputs.py does the same with the `jsonschema`
// package.) Patterns are checked with std::regex (ECMAScript, search), which
// works on bytes: right for ASCII patterns only.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace ember::test {

// "" when `instance` is valid under `schema` (whose $refs resolve in `root`),
// else what is wrong and where.
std::string SchemaViolation(const nlohmann::ordered_json& instance,
                            const nlohmann::ordered_json& schema,
                            const nlohmann::ordered_json& root);

}  // namespace ember::test
