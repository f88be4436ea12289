// A struct's JSON form as a table: one entry per key, saying how to write the member and how
// to read it back. The configuration (train/config.cpp) and the run file (train/run_record.cpp)
// are such tables, so that a key's name is written once and a bad value is refused naming it.
#pragma once

#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace tg::train::fields {

template <class T>
struct Field {
  const char* key;
  std::function<nlohmann::json(const T&)> get;  // null: the key is not written
  // Throws nlohmann::json::exception or std::invalid_argument on a value the member cannot take.
  std::function<void(T&, const nlohmann::json&)> set;
};

// What a value read from a file must be, when it is not: what read() names in its message.
struct NotA : std::invalid_argument {
  explicit NotA(const char* kind) : std::invalid_argument(kind) {}
};

// A whole number JSON holds exactly (at most 2^53): a count in a damaged file (-3, 1e30, 2.5)
// must not become a step count.
inline unsigned long long whole_number(const nlohmann::json& v) {
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<long long>() >= 0))
    throw NotA("a whole number");
  const auto n = v.get<unsigned long long>();
  if (n > (1ull << 53)) throw NotA("a whole number up to 2^53");
  return n;
}

// A JSON value read as V, refusing what nlohmann would silently convert (a fraction or a
// negative number to an unsigned count, a number to a bool). A NaN is written as null: a
// floating-point member reads it back.
template <class V>
V value_as(const nlohmann::json& v) {
  if constexpr (std::is_same_v<V, bool>) {
    if (!v.is_boolean()) throw NotA("true or false");
    return v.get<bool>();
  } else if constexpr (std::is_floating_point_v<V>) {
    if (v.is_null()) return static_cast<V>(NAN);
    if (!v.is_number()) throw NotA("a number");
    return v.get<V>();
  } else if constexpr (std::is_integral_v<V>) {
    return static_cast<V>(whole_number(v));
  } else if constexpr (std::is_same_v<V, std::string>) {
    if (!v.is_string()) throw NotA("a string");
    return v.get<std::string>();
  } else {
    return v.get<V>();
  }
}

// A member written as JSON of its own type; `member` maps a (const) T to it. A std::optional
// member is written only when it holds a value, and a key the JSON lacks leaves it empty.
template <class T, class Member>
Field<T> plain(const char* key, Member member) {
  return {key,
          [member](const T& t) -> nlohmann::json {
            const auto& m = member(t);
            if constexpr (requires { m.has_value(); })
              return m ? nlohmann::json(*m) : nlohmann::json();
            else
              return nlohmann::json(m);
          },
          [member](T& t, const nlohmann::json& v) {
            auto& m = member(t);
            using M = std::decay_t<decltype(m)>;
            if constexpr (requires { m.has_value(); })
              m = value_as<typename M::value_type>(v);
            else
              m = value_as<M>(v);
          }};
}

// The table's keys of t that have a value.
template <class T>
nlohmann::json write(std::span<const Field<T>> table, const T& t) {
  nlohmann::json j = nlohmann::json::object();
  for (const Field<T>& f : table)
    if (nlohmann::json v = f.get(t); !v.is_null()) j[f.key] = std::move(v);
  return j;
}

// Sets t's members from j's keys. A key the table has not is given to `other` (which may keep
// or refuse it); without `other` it is refused. Errors name the key as `noun`, after `where`
// ("results/x.json: field 'steps' is -3, not a whole number").
template <class T>
void read(std::span<const Field<T>> table, T& t, const nlohmann::json& j, const std::string& where,
          const std::function<void(const std::string&, const nlohmann::json&)>& other = {},
          const std::string& noun = "field") {
  if (!j.is_object()) throw std::invalid_argument(where + "not a JSON object");
  for (const auto& [key, value] : j.items()) {
    const Field<T>* field = nullptr;
    for (const Field<T>& f : table)
      if (key == f.key) field = &f;
    if (!field) {
      if (!other) throw std::invalid_argument(where + "unknown " + noun + " '" + key + "'");
      other(key, value);
      continue;
    }
    const std::string shown = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    try {
      field->set(t, value);
    } catch (const NotA& e) {
      throw std::invalid_argument(where + noun + " '" + key + "' is " + shown.substr(0, 60) +
                                  ", not " + e.what());
    } catch (const nlohmann::json::exception& e) {
      throw std::invalid_argument(where + noun + " '" + key + "': " + shown.substr(0, 60) +
                                  " is not a value it takes (" + e.what() + ")");
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(where + noun + " '" + key + "': " + e.what());
    }
  }
}

// A member that is a struct with a table of its own, written as an object; an empty
// std::optional member is written as nothing and read back from null.
template <class T, class Sub, class Member>
Field<T> object(const char* key, Member member, const std::vector<Field<Sub>>& (*table)()) {
  return {key,
          [member, table](const T& t) -> nlohmann::json {
            const auto& m = member(t);
            if constexpr (requires { m.has_value(); })
              return m ? write<Sub>(table(), *m) : nlohmann::json();
            else
              return write<Sub>(table(), m);
          },
          [member, table](T& t, const nlohmann::json& v) {
            if constexpr (requires { member(t).has_value(); })
              if (v.is_null()) return member(t).reset();
            Sub sub;
            read<Sub>(table(), sub, v, "");  // the caller's read() names this key
            member(t) = std::move(sub);
          }};
}

// A member that is a list of such structs, each read back naming its place ("[2]: ").
template <class T, class Sub, class Member>
Field<T> list(const char* key, Member member, const std::vector<Field<Sub>>& (*table)()) {
  return {key,
          [member, table](const T& t) {
            nlohmann::json out = nlohmann::json::array();
            for (const Sub& sub : member(t)) out.push_back(write<Sub>(table(), sub));
            return out;
          },
          [member, table](T& t, const nlohmann::json& v) {
            if (!v.is_array()) throw NotA("a list of objects");
            member(t).clear();
            for (size_t i = 0; i < v.size(); ++i)
              read<Sub>(table(), member(t).emplace_back(), v[i], "[" + std::to_string(i) + "]: ");
          }};
}

}  // namespace tg::train::fields
