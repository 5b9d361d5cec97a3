// JSON schema to GBNF (docs/GRAMMAR.md, "JSON schema"): a grammar whose
// sentences are exactly the JSON texts (with optional whitespace) that the
// schema accepts, within the subset below; any other keyword is an error that
// names it, never silently ignored.
//
//   type (one or a list; without it, the type the other keywords imply, or any
//   value), properties, required, additionalProperties (allowed unless false,
//   as the spec says; a schema constrains their values), items, prefixItems
//   (and draft-07 tuple items), enum, const, anyOf, oneOf (as anyOf: a grammar
//   cannot check that only one branch matches), allOf (the parts' keywords
//   merged), minItems, maxItems, minLength, maxLength, minimum, maximum,
//   exclusiveMinimum, exclusiveMaximum (integers: exact; numbers: inclusive
//   whole-number bounds), pattern (regex_gbnf.h), format (date, time,
//   date-time, uuid), $ref (within the document), $defs, definitions; and the
//   annotations title, description, default, examples, $schema, $id,
//   $comment, deprecated, readOnly, writeOnly.
//
// Objects list their declared properties in declaration order (required ones
// must appear), then any additional ones. Numbers have at most 16 digits
// before and after the point and 3 in the exponent.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "platform/status.h"

namespace ember {

// Errors: kUnsupported names the keyword or feature and where it is
// ("unsupported JSON schema keyword 'minProperties' at #/properties/tags");
// kInvalidArgument for text that is not JSON or a schema that is not valid
// ("type": 5, a $ref that leads nowhere, minLength above maxLength).
Status JsonSchemaToGbnf(std::string_view schema_json, std::string* gbnf);
Status SchemaToGbnf(const nlohmann::ordered_json& schema, std::string* gbnf);

// Any JSON object (`ember run --json-object`): the schema {"type": "object"}.
std::string JsonObjectGbnf();

}  // namespace ember
