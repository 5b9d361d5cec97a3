// Jinja's built-in filters, tests, globals and the Python methods templates
// call on strings, dicts and lists, with jinja2's (and Hugging Face's)
// behaviour: filters in jinja_filters.cpp (strings, numbers) and
// jinja_filters_seq.cpp (sequences, mappings), tests in jinja_tests.cpp,
// methods in jinja_methods.cpp, globals in jinja_globals.cpp.
#pragma once

#include <string>
#include <string_view>

#include "platform/status.h"
#include "runtime/chat/jinja_value.h"

namespace ember::jinja {

class Interpreter;

using FilterFn = Status (*)(Interpreter& in, const Value& value, CallArgs& args, Value* out);

// A row of the filter tables of jinja_filters.cpp and jinja_filters_seq.cpp.
struct FilterEntry {
  const char* name;
  FilterFn fn;
};

bool HasFilter(std::string_view name);
// The filters of jinja_filters_seq.cpp; null for other names.
FilterFn FindSequenceFilter(std::string_view name);
bool HasTest(std::string_view name);

// `value | name(args)`; the name is known (HasFilter).
Status CallFilter(Interpreter& in, const std::string& name, const Value& value, CallArgs& args,
                  Value* out);
// `value is name(args)`; the name is known (HasTest).
Status CallTest(Interpreter& in, const std::string& name, const Value& value, CallArgs& args,
                bool* out);

// obj.name for a method of a str, dict, list or loop object: a bound method, or an
// Undefined carrying jinja2's sandbox message for the methods that would modify a
// dict or list (append, update, ...). False if `obj` has no such method.
bool GetMethod(const Value& obj, const std::string& name, Value* out);

// range, namespace, dict, raise_exception, strftime_now. False if `name` is none of them.
bool GetGlobal(const std::string& name, Value* out);

// Python's str.strip/lstrip/rstrip (chars: the characters to strip; null: whitespace).
std::string StripString(std::string_view s, const std::string* chars, bool left, bool right);

// The error raise_exception gives: kInvalidArgument, the message marked so that the
// interpreter adds the template line.
Status RaisedError(const std::string& message);

// Markup's escaping: & < > ' " as HTML entities.
std::string HtmlEscape(std::string_view s);

// Python's str.upper()/lower() for ASCII, Latin-1, Latin Extended-A, Greek and Cyrillic.
std::string ToUpper(std::string_view s);
std::string ToLower(std::string_view s);

// A boolean argument as Python reads it (truthiness); dflt when absent.
inline bool BoolArg(const Value* v, bool dflt) { return v ? Truthy(*v) : dflt; }

// Argument binding for builtins: the positional argument i, else the keyword `name`,
// else null.
const Value* Arg(const CallArgs& args, size_t i, const char* name);

}  // namespace ember::jinja
