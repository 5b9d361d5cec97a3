// Errors in OpenAI's shape. A handler throws ApiError; the route wrapper turns
// it into the HTTP status and the body OpenAI's clients parse:
//   {"error": {"message": ..., "type": "invalid_request_error", "param": ..., "code": ...}}
// Clients (the openai python package among them) show `message` to the user,
// so it says what was wrong and with which field.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace serve {

struct ApiError {
  int status = 400;
  std::string message;
  std::string param;  // the request field at fault, "" for none (null in JSON)
  std::string type = "invalid_request_error";
  std::string code;  // "" for none (null in JSON)
};

inline ApiError BadRequest(std::string message, std::string param = "", std::string code = "") {
  return ApiError{400, std::move(message), std::move(param), "invalid_request_error",
                  std::move(code)};
}

inline nlohmann::json ErrorBody(const ApiError& e) {
  nlohmann::json err = {{"message", e.message},
                        {"type", e.type},
                        {"param", e.param.empty() ? nlohmann::json() : nlohmann::json(e.param)},
                        {"code", e.code.empty() ? nlohmann::json() : nlohmann::json(e.code)}};
  return nlohmann::json{{"error", std::move(err)}};
}

}  // namespace serve
