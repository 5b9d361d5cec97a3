// The schema converter behind JsonSchemaToGbnf (json_schema.h), shared by
// json_schema.cpp (keywords, references, combinations, output) and
// json_schema_types.cpp (the rules of each JSON type).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "platform/status.h"

namespace ember::schema {

using Json = nlohmann::ordered_json;

// A GBNF literal for `text` ("..." with \ " and controls escaped).
std::string Literal(const std::string& text);

class Converter {
 public:
  explicit Converter(const Json& root) : root_(root) {}
  Status Run(std::string* gbnf);

  // A GBNF expression for the values `s` accepts (a rule name or a small
  // expression). `where` is a JSON pointer for messages, `name` the rule name
  // to use if a rule is made.
  Status Visit(const Json& s, const std::string& where, const std::string& name, std::string* expr);

 private:
  // json_schema.cpp
  Status CheckKeywords(const Json& s, const std::string& where) const;
  Status Resolve(const std::string& ref, const std::string& where, const Json** out) const;
  Status RefRule(const std::string& ref, const std::string& where, std::string* expr);
  Status Merge(const std::vector<Json>& parts, const std::string& where, int depth, Json* out);
  Status MergeKey(const std::string& key, const Json& a, const Json& b, const std::string& where,
                  Json* out);
  Status Constants(const Json& s, const std::string& where, std::string* expr);
  Status Types(const Json& s, const std::string& where, std::vector<std::string>* out) const;

  // json_schema_types.cpp
  Status VisitType(const Json& s, const std::string& type, const std::string& where,
                   const std::string& name, std::string* expr);
  Status StringRule(const Json& s, const std::string& where, const std::string& name,
                    std::string* expr);
  Status NumberRule(const Json& s, bool integer, const std::string& where, const std::string& name,
                    std::string* expr);
  Status ObjectRule(const Json& s, const std::string& where, const std::string& name,
                    std::string* expr);
  Status ArrayRule(const Json& s, const std::string& where, const std::string& name,
                   std::string* expr);
  std::string NotNames(const std::vector<std::string>& names, const std::string& name);

 public:
  // A rule named after `name` (made unique), defined as `body`; returns its
  // name. Equal bodies share one rule.
  std::string AddRule(const std::string& name, const std::string& body);
  // A built-in rule (space, char, string, number, integer, boolean, null,
  // value, object, array, date, time, ...) and what it uses; returns its name.
  std::string Primitive(const std::string& name);

 private:
  std::string UniqueName(const std::string& name);

  const Json& root_;
  std::vector<std::pair<std::string, std::string>> rules_;  // in order of creation
  std::map<std::string, std::string> by_body_;              // body -> rule
  std::set<std::string> names_;
  std::map<std::string, std::string> refs_;  // $ref -> rule
};

// Integer-valued bounds of a number (minimum/maximum and the exclusive ones).
struct Bounds {
  std::optional<int64_t> lo, hi;
};

}  // namespace ember::schema
