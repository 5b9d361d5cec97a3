// The chat page served at "/": one HTML document with its CSS and script
// inline (no external assets, so it works offline), streaming replies from
// /v1/chat/completions.
#pragma once

namespace serve {

const char* WebPage();

}  // namespace serve
