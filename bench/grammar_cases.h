// The cases of bench/grammar_bench.cpp: a grammar (GBNF, or a JSON schema
// ember converts) and a document that follows it, forced token by token.
// The documents are written as a model would write them: pretty-printed,
// with long strings, escapes and some non-ASCII text.
#pragma once

namespace ember::bench {

struct GrammarCase {
  const char* name;
  const char* grammar_file;  // a file of ../shared/grammars, or nullptr
  const char* schema;        // a JSON schema, or nullptr
  const char* document;
};

inline const GrammarCase kGrammarCases[] = {
    {"json", "json.gbnf", nullptr, R"({
  "library": "Bibliotheca Alexandrina",
  "founded": -283,
  "open": true,
  "rating": 4.75,
  "address": {"street": "El Shatby", "city": "Alexandria", "country": "Egypt", "zip": null},
  "collections": [
    {"name": "Rare books", "items": 50000, "digitized": 0.35, "curators": ["Hypatia", "Eratosthenes"]},
    {"name": "Maps", "items": 12000, "digitized": 0.8, "curators": []},
    {"name": "Manuscripts \"and\" scrolls", "items": 6500, "digitized": 1e-1, "curators": ["Callimachus"]}
  ],
  "description": "The library was one of the largest and most significant libraries of the ancient world. It was dedicated to the Muses, the nine goddesses of the arts, and was part of a larger research institution called the Mouseion. Many important and influential scholars worked there, including Zenodotus of Ephesus, who worked towards standardizing the texts of the Homeric poems.",
  "languages": ["Greek", "Latin", "العربية", "Ελληνικά"],
  "visitors_per_year": [1200000, 1350000, 1410000, 1500000],
  "notes": "Line one\nLine two\ttabbed \\ backslash \u00e9"
})"},
    {"person", nullptr, R"({
  "type": "object",
  "properties": {
    "name": {"type": "string", "maxLength": 60},
    "age": {"type": "integer", "minimum": 0, "maximum": 150},
    "email": {"type": "string", "pattern": "^[a-z0-9._]+@[a-z0-9]+\\.[a-z]{2,4}$"},
    "phone": {"type": ["string", "null"]},
    "tags": {"type": "array", "items": {"type": "string", "maxLength": 20}, "maxItems": 10},
    "address": {
      "type": "object",
      "properties": {"street": {"type": "string"}, "city": {"type": "string"},
                     "postcode": {"type": "string", "pattern": "^[0-9]{5}$"}},
      "required": ["street", "city"],
      "additionalProperties": false
    },
    "member_since": {"type": "string", "format": "date"},
    "active": {"type": "boolean"}
  },
  "required": ["name", "age", "email", "address", "active"],
  "additionalProperties": false
})",
     R"({
  "name": "Margaret Hamilton",
  "age": 88,
  "email": "m.hamilton@mit.edu",
  "phone": null,
  "tags": ["software", "apollo", "engineering", "pioneer"],
  "address": {
    "street": "77 Massachusetts Avenue",
    "city": "Cambridge",
    "postcode": "02139"
  },
  "member_since": "1959-09-01",
  "active": true
})"},
    {"orders", nullptr, R"({
  "type": "array",
  "maxItems": 20,
  "items": {
    "type": "object",
    "properties": {
      "id": {"type": "string", "format": "uuid"},
      "placed": {"type": "string", "format": "date-time"},
      "status": {"enum": ["pending", "shipped", "delivered", "cancelled"]},
      "lines": {
        "type": "array", "minItems": 1,
        "items": {
          "type": "object",
          "properties": {
            "sku": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{4}$"},
            "qty": {"type": "integer", "minimum": 1, "maximum": 99},
            "price": {"type": "number", "minimum": 0, "maximum": 10000}
          },
          "required": ["sku", "qty", "price"],
          "additionalProperties": false
        }
      },
      "note": {"type": "string", "maxLength": 200}
    },
    "required": ["id", "placed", "status", "lines"],
    "additionalProperties": false
  }
})",
     R"([
  {
    "id": "0f8fad5b-d9cb-469f-a165-70867728950e",
    "placed": "2024-03-14T09:26:53Z",
    "status": "shipped",
    "lines": [
      {"sku": "ABC-1234", "qty": 2, "price": 19.99},
      {"sku": "XYZ-0001", "qty": 1, "price": 249.5}
    ],
    "note": "Leave the parcel at the back door, please."
  },
  {
    "id": "7c9e6679-7425-40de-944b-e07fc1f90ae7",
    "placed": "2024-03-15T17:02:11+01:00",
    "status": "pending",
    "lines": [
      {"sku": "QRS-5678", "qty": 10, "price": 3.25}
    ]
  },
  {
    "id": "9b2f8a3e-1c4d-4e5f-8a7b-6c5d4e3f2a1b",
    "placed": "2024-03-16T08:00:00Z",
    "status": "delivered",
    "lines": [
      {"sku": "LMN-4242", "qty": 1, "price": 1299},
      {"sku": "OPQ-9999", "qty": 3, "price": 0.5}
    ],
    "note": "Gift wrap; no invoice in the box."
  }
])"},
    {"article", nullptr, R"({
  "type": "object",
  "properties": {
    "title": {"type": "string", "maxLength": 120},
    "author": {"type": "string"},
    "body": {"type": "string", "minLength": 100, "maxLength": 1000},
    "sections": {
      "type": "array", "maxItems": 8,
      "items": {"type": "object",
                "properties": {"heading": {"type": "string", "maxLength": 80},
                               "words": {"type": "integer", "minimum": 0}},
                "required": ["heading", "words"], "additionalProperties": false}
    },
    "published": {"type": "boolean"},
    "score": {"type": "number"}
  },
  "required": ["title", "author", "body", "published"],
  "additionalProperties": false
})",
     R"({
  "title": "How the Antikythera mechanism predicted eclipses",
  "author": "A. Researcher",
  "body": "The Antikythera mechanism is an ancient Greek hand-powered orrery, described as the oldest known example of an analogue computer. It was used to predict astronomical positions and eclipses decades in advance. It could also be used to track the four-year cycle of athletic games, similar to an Olympiad. The artefact was among wreckage retrieved from a shipwreck off the coast of the Greek island Antikythera in 1901. In 1902, during a visit to the National Archaeological Museum in Athens, it was noticed by archaeologist Valerios Stais as containing a gear wheel.",
  "sections": [
    {"heading": "Discovery", "words": 420},
    {"heading": "Gearing and the lunar anomaly", "words": 1310},
    {"heading": "Eclipse prediction", "words": 980}
  ],
  "published": true,
  "score": 9.25
})"},
};

}  // namespace ember::bench
