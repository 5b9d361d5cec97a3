// Jinja's built-in filters on sequences and mappings (map, select, sort,
// join, dictsort, ...), as jinja2 3.1 defines them. Those that jinja2 writes as
// generators (map, select, reject, selectattr, rejectattr, unique, items,
// batch, reverse of a list) give a generator value: it iterates once and has
// no length, as in Python.
#include <algorithm>
#include <cstdlib>

#include "runtime/chat/jinja_builtins.h"
#include "runtime/chat/jinja_eval.h"

namespace ember::jinja {
namespace {

Status Generator(std::vector<Value> items, Value* out) {
  return Value::List(std::move(items), ListKind::kGenerator, out);
}

// The attribute getter of map/sort/selectattr...: "a.b.0" -> item lookups.
Status GetPath(Interpreter& in, const Value& item, const std::string& path, Value* out) {
  *out = item;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string part = path.substr(start, dot == std::string::npos ? dot : dot - start);
    Value key = Value::String(part);
    if (!part.empty() &&
        std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      key = Value::Int(std::strtoll(part.c_str(), nullptr, 10));
    }
    Value next;
    EMBER_RETURN_IF_ERROR(in.GetItem(*out, key, &next));
    *out = std::move(next);
    if (dot == std::string::npos) return Status::Ok();
    start = dot + 1;
  }
}

// The sort key: the attribute (if any), lowercased when not case sensitive.
Status SortKey(Interpreter& in, const Value& item, const Value* attribute, bool case_sensitive,
               Value* out) {
  if (attribute && !attribute->is_none()) {
    std::string path;
    EMBER_RETURN_IF_ERROR(ToStr(*attribute, &path));
    EMBER_RETURN_IF_ERROR(GetPath(in, item, path, out));
  } else {
    *out = item;
  }
  if (!case_sensitive && out->is_string()) *out = Value::String(ToLower(out->str()));
  return Status::Ok();
}

// Stable sort of items by keys, with Python's comparison errors.
Status SortByKeys(std::vector<Value>* items, std::vector<Value> keys, bool reverse) {
  std::vector<size_t> order(items->size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  Status err;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    bool less = false;
    Status s = reverse ? Less(keys[b], keys[a], &less) : Less(keys[a], keys[b], &less);
    if (!s.ok() && err.ok()) err = s;
    return less;
  });
  EMBER_RETURN_IF_ERROR(err);
  std::vector<Value> sorted;
  sorted.reserve(items->size());
  for (size_t i : order) sorted.push_back((*items)[i]);
  *items = std::move(sorted);
  return Status::Ok();
}

Status FBatch(Interpreter& in, const Value& v, CallArgs& args, Value* out) {
  const Value* count = Arg(args, 0, "linecount");
  const Value* fill = Arg(args, 1, "fill_with");
  if (!count || !count->is_integral() || count->as_int() <= 0) {
    return InvalidArgument("batch needs a positive line count");
  }
  std::vector<Value> items, batches, cur;
  EMBER_RETURN_IF_ERROR(in.Iterate(v, &items));
  const auto n = static_cast<size_t>(count->as_int());
  for (Value& x : items) {
    cur.push_back(std::move(x));
    if (cur.size() == n) {
      Value b;
      EMBER_RETURN_IF_ERROR(Value::List(std::move(cur), ListKind::kList, &b));
      batches.push_back(std::move(b));
      cur.clear();
    }
  }
  if (!cur.empty()) {
    if (fill && !fill->is_none()) {
      while (cur.size() < n) cur.push_back(*fill);
    }
    Value b;
    EMBER_RETURN_IF_ERROR(Value::List(std::move(cur), ListKind::kList, &b));
    batches.push_back(std::move(b));
  }
  return Generator(std::move(batches), out);
}

Status FDictsort(Interpreter& in, const Value& v, CallArgs& args, Value* out) {
  if (v.is_undefined()) return in.UndefinedError(v);
  if (!v.is_dict()) return InvalidArgument("You can only sort by either 'key' or 'value'");
  const bool case_sensitive = BoolArg(Arg(args, 0, "case_sensitive"), false);
  std::string by = "key";
  if (const Value* b = Arg(args, 1, "by")) EMBER_RETURN_IF_ERROR(ToStr(*b, &by));
  if (by != "key" && by != "value") {
    return InvalidArgument("You can only sort by either 'key' or 'value'");
  }
  const bool reverse = BoolArg(Arg(args, 2, "reverse"), false);
  std::vector<Value> items, keys;
  for (const auto& [k, x] : v.dict().items) {
    Value pair;
    EMBER_RETURN_IF_ERROR(Value::List({k, x}, ListKind::kTuple, &pair));
    items.push_back(std::move(pair));
    Value key = by == "key" ? k : x;
    if (!case_sensitive && key.is_string()) key = Value::String(ToLower(key.str()));
    keys.push_back(std::move(key));
  }
  EMBER_RETURN_IF_ERROR(SortByKeys(&items, std::move(keys), reverse));
  return Value::List(std::move(items), ListKind::kList, out);
}

Status FFirst(Interpreter& in, const Value& v, CallArgs&, Value* out) {
  std::vector<Value> items;
  EMBER_RETURN_IF_ERROR(in.Iterate(v, &items));
  *out = items.empty() ? Value::Undefined("No first item, sequence was empty.") : items.front();
  return Status::Ok();
}

Status FLast(Interpreter& in, const Value& v, CallArgs&, Value* out) {
  if (v.is_list() && v.list().kind == ListKind::kGenerator) {
    return InvalidArgument("'generator' object is not reversible");
  }
  std::vector<Value> items;
  EMBER_RETURN_IF_ERROR(in.Iterate(v, &items));
  *out = items.empty() ? Value::Undefined("No last item, sequence was empty.") : items.back();
  return Status::Ok();
}

Status FItems(Interpreter& in, const Value& v, CallArgs&, Value* out) {
  std::vector<Value> items;
  if (v.is_undefined()) return Generator({}, out);
  if (!v.is_dict()) return InvalidArgument("Can only get item pairs from a mapping.");
  for (const auto& [k, x] : v.dict().items) {
    Value pair;
    EMBER_RETURN_IF_ERROR(Value::List({k, x}, ListKind::kTuple, &pair));
    items.push_back(std::move(pair));
  }
  (void)in;
  return Generator(std::move(items), out);
}

Status FJoin(Interpreter& in, const Value& v, CallArgs& args, Value* out) {
  std::string sep;
  if (const Value* d = Arg(args, 0, "d")) EMBER_RETURN_IF_ERROR(ToStr(*d, &sep));
  const Value* attribute = Arg(args, 1, "attribute");
  std::vector<Value> items;
  EMBER_RETURN_IF_ERROR(in.Iterate(v, &items));
  std::string r, piece;
  for (size_t i = 0; i < items.size(); ++i) {
    Value x = items[i];
    if (attribute && !attribute->is_none()) {
      std::string path;
      EMBER_RETURN_IF_ERROR(ToStr(*attribute, &path));
      EMBER_RETURN_IF_ERROR(GetPath(in, items[i], path, &x));
    }
    EMBER_RETURN_IF_ERROR(ToStr(x, &piece));
    if (i) r += sep;
    r += piece;
    EMBER_RETURN_IF_ERROR(in.CheckStringSize(r.size()));
  }
  *out = Value::String(std::move(r));
  return Status::Ok();
}

Status FLength(Interpreter&, const Value& v, CallArgs&, Value* out) {
  size_t n = 0;
  switch (v.kind()) {
    case Kind::kUndefined:
      break;
    case Kind::kString:
      n = CodePointCount(v.str());
      break;
    case Kind::kList:
      if (v.list().kind == ListKind::kGenerator) {
        return InvalidArgument("object of type 'generator' has no len()");
      }
      n = v.list().items.size();
      break;
    case Kind::kDict:
      n = v.dict().size();
      break;
    default:
      return InvalidArgument(std::string("object of type '") + TypeName(v) + "' has no len()");
  }
  *out = Value::Int(static_cast<int64_t>(n));
  return Status::Ok();
}

Status FList(Interpreter& in, const Value& v, CallArgs&, Value* out) {
  std::vector<Value> items;
  EMBER_RETURN_IF_ERROR(in.Iterate(v, &items));
  return Value::List(std::move(items), ListKind::kList, out);
}

Status FMap(Interpreter& in, const Value& v, CallArgs& args, Value* out) {
  std::vector<Value> items, r;
  if (!Truthy(v)) return Generator({}, out);  // jinja2 checks `if value:` first (None is fine)
  EMBER_RETURN_IF_ERROR(in.Iterate(v, &items));
  if (args.pos.empty()) {
    const Value* attribute = Arg(args, SIZE_MAX, "attribute");
    if (!attribute) return InvalidArgument("map requires a filter argument");
    const Value* dflt = Arg(args, SIZE_MAX, "default");
    std::string path;
    EMBER_RETURN_IF_ERROR(ToStr(*attribute, &path));
    for (const Value& x : items) {
      Value y;
      EMBER_RETURN_IF_ERROR(GetPath(in, x, path, &y));
      if (y.is_undefined() && dflt) y = *dflt;
      r.push_back(std::move(y));
    }
    return Generator(std::move(r), out);
  }
  std::string filter;
  EMBER_RETURN_IF_ERROR(ToStr(args.pos[0], &filter));
  CallArgs rest;
  rest.pos.assign(args.pos.begin() + 1, args.pos.end());
  rest.kw = args.kw;
  for (const Value& x : items) {
    Value y;
    CallArgs a = rest;
    EMBER_RETURN_IF_ERROR(in.ApplyFilter(filter, x, a, &y));
    r.push_back(std::move(y));
  }
  return Generator(std::move(r), out);
}

Status MinMax(Interpreter& in, const Value& v, CallArgs& args, bool max, Value* out) {
  const bool case_sensitive = BoolArg(Arg(args, 0, "case_sensitive"), false);
  const Value* attribute = Arg(args, 1, "attribute");
  std::vector<Value> items;
  EMBER_RETURN_IF_ERROR(in.Iterate(v, &items));
  if (items.empty()) {
    *out = Value::Undefined("No aggregated item, sequence was empty.");
    return Status::Ok();
  }
  size_t best = 0;
  Value best_key;
  EMBER_RETURN_IF_ERROR(SortKey(in, items[0], attribute, case_sensitive, &best_key));
  for (size_t i = 1; i < items.size(); ++i) {
    Value key;
    EMBER_RETURN_IF_ERROR(SortKey(in, items[i], attribute, case_sensitive, &key));
    bool better = false;
    EMBER_RETURN_IF_ERROR(max ? Less(best_key, key, &better) : Less(key, best_key, &better));
    if (better) {
      best = i;
      best_key = std::move(key);
    }
  }
  *out = items[best];
  return Status::Ok();
}

Status FMax(Interpreter& in, const Value& v, CallArgs& args, Value* out) {
  return MinMax(in, v, args, true, out);
}

Status FMin(Interpreter& in, const Value& v, CallArgs& args, Value* out) {
  return MinMax(in, v, args, false, out);
}

// select / reject (test on the item) and selectattr / rejectattr (test on an attribute).
Status SelectOrReject(Interpreter& in, const Value& v, CallArgs& args, bool by_attr, bool keep,
                      Value* out) {
  std::vector<Value> items, r;
  if (!Truthy(v)) return Generator({}, out);  // jinja2 checks `if value:` first (None is fine)
  EMBER_RETURN_IF_ERROR(in.Iterate(v, &items));
  size_t next = 0;
  std::string path;
  if (by_attr) {
    if (args.pos.empty()) return InvalidArgument("Missing parameter for attribute name");
    EMBER_RETURN_IF_ERROR(ToStr(args.pos[0], &path));
    next = 1;
  }
  std::string test;
  if (args.pos.size() > next) EMBER_RETURN_IF_ERROR(ToStr(args.pos[next], &test));
  CallArgs test_args;
  if (args.pos.size() > next + 1) test_args.pos.assign(args.pos.begin() + next + 1, args.pos.end());
  test_args.kw = args.kw;
  for (const Value& x : items) {
    Value subject = x;
    if (by_attr) EMBER_RETURN_IF_ERROR(GetPath(in, x, path, &subject));
    bool pass = false;
    if (test.empty()) {
      pass = Truthy(subject);
    } else {
      CallArgs a = test_args;
      EMBER_RETURN_IF_ERROR(in.ApplyTest(test, subject, a, &pass));
    }
    if (pass == keep) r.push_back(x);
  }
  return Generator(std::move(r), out);
}

Status FSelect(Interpreter& in, const Value& v, CallArgs& a, Value* o) {
  return SelectOrReject(in, v, a, false, true, o);
}

Status FReject(Interpreter& in, const Value& v, CallArgs& a, Value* o) {
  return SelectOrReject(in, v, a, false, false, o);
}

Status FSelectattr(Interpreter& in, const Value& v, CallArgs& a, Value* o) {
  return SelectOrReject(in, v, a, true, true, o);
}

Status FRejectattr(Interpreter& in, const Value& v, CallArgs& a, Value* o) {
  return SelectOrReject(in, v, a, true, false, o);
}

Status FReverse(Interpreter& in, const Value& v, CallArgs&, Value* out) {
  if (v.is_string()) {
    std::vector<size_t> offsets = CodePointOffsets(v.str());
    std::string r;
    for (size_t i = offsets.size() - 1; i > 0; --i) {
      r.append(v.str(), offsets[i - 1], offsets[i] - offsets[i - 1]);
    }
    *out = Value::String(std::move(r));
    return Status::Ok();
  }
  if (v.is_list() && v.list().kind == ListKind::kGenerator) {
    std::vector<Value> items;  // reversed() fails on a generator; jinja2 then makes a list
    EMBER_RETURN_IF_ERROR(in.Iterate(v, &items));
    std::reverse(items.begin(), items.end());
    return Value::List(std::move(items), ListKind::kList, out);
  }
  std::vector<Value> items;
  EMBER_RETURN_IF_ERROR(in.Iterate(v, &items));
  std::reverse(items.begin(), items.end());
  return Generator(std::move(items), out);
}

Status FSort(Interpreter& in, const Value& v, CallArgs& args, Value* out) {
  const bool reverse = BoolArg(Arg(args, 0, "reverse"), false);
  const bool case_sensitive = BoolArg(Arg(args, 1, "case_sensitive"), false);
  const Value* attribute = Arg(args, 2, "attribute");
  std::vector<Value> items, keys;
  EMBER_RETURN_IF_ERROR(in.Iterate(v, &items));
  for (const Value& x : items) {
    Value k;
    EMBER_RETURN_IF_ERROR(SortKey(in, x, attribute, case_sensitive, &k));
    keys.push_back(std::move(k));
  }
  EMBER_RETURN_IF_ERROR(SortByKeys(&items, std::move(keys), reverse));
  return Value::List(std::move(items), ListKind::kList, out);
}

Status FSum(Interpreter& in, const Value& v, CallArgs& args, Value* out) {
  const Value* attribute = Arg(args, 0, "attribute");
  const Value* start = Arg(args, 1, "start");
  std::vector<Value> items;
  EMBER_RETURN_IF_ERROR(in.Iterate(v, &items));
  Value total = start ? *start : Value::Int(0);
  for (const Value& x : items) {
    Value y = x;
    if (attribute && !attribute->is_none()) {
      std::string path;
      EMBER_RETURN_IF_ERROR(ToStr(*attribute, &path));
      EMBER_RETURN_IF_ERROR(GetPath(in, x, path, &y));
    }
    if (!(total.is_integral() || total.is_float()) || !(y.is_integral() || y.is_float())) {
      return InvalidArgument(std::string("unsupported operand type(s) for +: '") + TypeName(total) +
                             "' and '" + TypeName(y) + "'");
    }
    if (total.is_float() || y.is_float()) {
      total = Value::Float(total.as_float() + y.as_float());
    } else {
      int64_t r;
      if (__builtin_add_overflow(total.as_int(), y.as_int(), &r)) {
        return InvalidArgument("integer overflow");
      }
      total = Value::Int(r);
    }
  }
  *out = total;
  return Status::Ok();
}

Status FUnique(Interpreter& in, const Value& v, CallArgs& args, Value* out) {
  const bool case_sensitive = BoolArg(Arg(args, 0, "case_sensitive"), false);
  const Value* attribute = Arg(args, 1, "attribute");
  std::vector<Value> items, seen, r;
  EMBER_RETURN_IF_ERROR(in.Iterate(v, &items));
  for (const Value& x : items) {
    Value k;
    EMBER_RETURN_IF_ERROR(SortKey(in, x, attribute, case_sensitive, &k));
    bool dup = false;
    for (const Value& s : seen) dup = dup || Equals(s, k);
    if (dup) continue;
    seen.push_back(std::move(k));
    r.push_back(x);
  }
  return Generator(std::move(r), out);
}

const FilterEntry kSequenceFilters[] = {
    {"batch", FBatch},
    {"count", FLength},
    {"dictsort", FDictsort},
    {"first", FFirst},
    {"items", FItems},
    {"join", FJoin},
    {"last", FLast},
    {"length", FLength},
    {"list", FList},
    {"map", FMap},
    {"max", FMax},
    {"min", FMin},
    {"reject", FReject},
    {"rejectattr", FRejectattr},
    {"reverse", FReverse},
    {"select", FSelect},
    {"selectattr", FSelectattr},
    {"sort", FSort},
    {"sum", FSum},
    {"unique", FUnique},
};

}  // namespace

FilterFn FindSequenceFilter(std::string_view name) {
  for (const FilterEntry& f : kSequenceFilters) {
    if (name == f.name) return f.fn;
  }
  return nullptr;
}

}  // namespace ember::jinja
