// SPDX-License-Identifier: Apache-2.0
// Value streams: round trips in every mode and width, and the SQL decoder used by the views.
#include "store/codec.hpp"
#include "store/database.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

namespace gua::store {
namespace {

std::vector<std::uint64_t> round_trip(const std::vector<std::uint64_t>& values, std::size_t period,
                                      std::string* text = nullptr) {
    codec::StreamWriter w;
    w.clear(period);
    for (std::uint64_t v : values) {
        w.append(v);
    }
    std::vector<std::uint64_t> out;
    EXPECT_TRUE(codec::decode(w.text(), values.size(), period, out));
    if (text != nullptr) {
        *text = w.text();
    }
    return out;
}

TEST(Codec, ConstantPeriodicAndVaryingStreams) {
    std::string text;
    EXPECT_EQ(round_trip({7, 7, 7, 7}, 2, &text), (std::vector<std::uint64_t>{7, 7, 7, 7}));
    EXPECT_EQ(text, "a\x09");
    EXPECT_EQ(round_trip({1, 2, 1, 2, 1}, 2, &text), (std::vector<std::uint64_t>{1, 2, 1, 2, 1}));
    EXPECT_EQ(text, "Q\x03\x04");
    EXPECT_EQ(round_trip({1, 2, 1, 3}, 2, &text), (std::vector<std::uint64_t>{1, 2, 1, 3}));
    EXPECT_EQ(text, "A\x03\x04\x03\x05");
    EXPECT_EQ(round_trip({codec::k_null, 5}, 1), (std::vector<std::uint64_t>{codec::k_null, 5}));
}

TEST(Codec, SlottedStreamsKeepOneValuePerSteadySlot) {
    // Three slots over four ticks: slots 0 and 2 steady, slot 1 changing.
    const std::vector<std::uint64_t> values{7, 1, 9, 7, 2, 9, 7, 3, 9, 7, 4, 9};
    std::string text;
    EXPECT_EQ(round_trip(values, 3, &text), values);
    EXPECT_EQ(text, "q\x02\x03\x02\x09\x03\x04\x05\x06\x0b");
    // Only whole ticks are slotted; a slot changing only from the second tick on still is.
    const std::vector<std::uint64_t> partial{7, 1, 9, 7, 2};
    EXPECT_EQ(round_trip(partial, 3, &text), partial);
    EXPECT_EQ(text.front(), 'A');
    // When every slot changes, keeping every value is shorter.
    const std::vector<std::uint64_t> busy{1, 2, 3, 4, 5, 6};
    EXPECT_EQ(round_trip(busy, 2, &text), busy);
    EXPECT_EQ(text.front(), 'A');
    codec::Values v;
    EXPECT_FALSE(codec::decode("q\x02\x03\x09\x04\x05", 5, 2, v)) << "not whole ticks";
    EXPECT_FALSE(codec::decode("q\x02\x04\x09\x04", 4, 2, v)) << "unknown slot mode";
    EXPECT_FALSE(codec::decode("q\x03\x03\x09", 200000, 2, v)) << "more than the text holds";
    EXPECT_TRUE(v.kept.empty());
}

TEST(Codec, WidensForLargeValues) {
    const std::vector<std::uint64_t> values{
        0, 0xD7FE, 0xD800, 1ULL << 20, 1ULL << 45, codec::k_null - 1, 3};
    EXPECT_EQ(round_trip(values, 1), values);
}

TEST(Codec, RejectsMalformedText) {
    std::vector<std::uint64_t> out;
    EXPECT_FALSE(codec::decode("Z\x03", 1, 1, out));
    EXPECT_FALSE(codec::decode("A\x03", 2, 1, out));
    EXPECT_FALSE(codec::decode("A\x03\x03\x03", 2, 1, out));
    EXPECT_FALSE(codec::decode("A\xff", 1, 1, out));
}

TEST(Codec, ZigzagRoundTrips) {
    for (std::int64_t v : {0LL, -1LL, 1LL, -123456789LL, 1LL << 40}) {
        EXPECT_EQ(codec::unzigzag(codec::zigzag(v)), v);
    }
    EXPECT_EQ(codec::zigzag(-1), 1U);
}

RC_GTEST_PROP(CodecProperty, DecodeInvertsAppend, ()) {
    const auto period = *rc::gen::inRange<std::size_t>(1, 5);
    const auto values = *rc::gen::container<std::vector<std::uint64_t>>(
        rc::gen::oneOf(rc::gen::inRange<std::uint64_t>(0, 4), rc::gen::arbitrary<std::uint64_t>(),
                       rc::gen::just(codec::k_null)));
    codec::StreamWriter w;
    w.clear(period);
    for (std::uint64_t v : values) {
        w.append(v);
    }
    std::vector<std::uint64_t> out;
    RC_ASSERT(codec::decode(w.text(), values.size(), period, out));
    RC_ASSERT(out == values);
}

/// Value number `i` of stream `text` (period 1) as SQL's unicode() decodes it.
std::optional<std::int64_t> sql_value(Database& db, const std::string& text, std::int64_t i) {
    Statement st = db.prepare(fmt::format("SELECT {}", codec::value_sql("?1", "?2", "1", "1")));
    st.bind(1, std::string_view(text));
    st.bind(2, i);
    EXPECT_TRUE(st.step());
    return st.opt_int64(0);
}

TEST(Codec, NoNoncharactersSoSqlReadsEveryDigit) {
    // Digits 0xF7FC and 0xF7FD became U+FFFE and U+FFFF before schema 4, which SQLite's
    // unicode() reads as U+FFFD (63483 for what was 63484/63485).
    const std::vector<std::uint64_t> values{
        0xF7FB, 0xF7FC, 0xF7FD, 0xF7FE, (0xF7FCULL << 20) | 0xF7FD, (1ULL << 20) - 1};
    std::string text;
    EXPECT_EQ(round_trip(values, 1, &text), values);
    EXPECT_EQ(text.find("\xEF\xBF\xBE"), std::string::npos);
    EXPECT_EQ(text.find("\xEF\xBF\xBF"), std::string::npos);
    Database db(":memory:", OpenMode::create);
    for (std::size_t i = 0; i < values.size(); ++i) {
        EXPECT_EQ(sql_value(db, text, static_cast<std::int64_t>(i)),
                  static_cast<std::int64_t>(values[i]))
            << i;
    }
    // A stream written before schema 4 with U+FFFE/U+FFFF still decodes in C++.
    std::vector<std::uint64_t> out;
    ASSERT_TRUE(codec::decode("B\xEF\xBF\xBE\xEF\xBF\xBF", 1, 1, out));
    EXPECT_EQ(out, std::vector<std::uint64_t>{(0xF7FCULL << 20) | 0xF7FD});
}

TEST(Codec, ACountTheTextCannotHoldIsRejected) {
    codec::Values v;
    EXPECT_FALSE(codec::decode("A\x03\x03", 1000000000, 1, v)) << "varying: one value per digit";
    EXPECT_TRUE(v.kept.empty()) << "nothing allocated for the claimed count";
    ASSERT_TRUE(codec::decode("a\x05", 1000000000, 1, v)) << "constant: one value kept";
    EXPECT_EQ(v.kept.size(), 1U);
    EXPECT_EQ(v.at(999999999), 3U);
    EXPECT_FALSE(codec::decode(std::string("A\xED\xA0\x80"), 1, 1, v)) << "a surrogate";
}

RC_GTEST_PROP(CodecProperty, SqlDecoderAgrees, ()) {
    const auto period = *rc::gen::inRange<std::size_t>(1, 4);
    const auto values =
        *rc::gen::nonEmpty(rc::gen::container<std::vector<std::uint64_t>>(rc::gen::oneOf(
            rc::gen::inRange<std::uint64_t>(0, 3), rc::gen::inRange<std::uint64_t>(0, 1ULL << 62),
            rc::gen::inRange<std::uint64_t>(0xF7F0, 0xF800), // digits near U+FFFE/U+FFFF
            rc::gen::just(codec::k_null))));
    codec::StreamWriter w;
    w.clear(period);
    for (std::uint64_t v : values) {
        w.append(v);
    }
    Database db(":memory:", OpenMode::create);
    Statement st = db.prepare(fmt::format("SELECT {}", codec::value_sql("?1", "?2", "?3", "?4")));
    for (std::size_t i = 0; i < values.size(); ++i) {
        st.bind(1, std::string_view(w.text()));
        st.bind(2, static_cast<std::int64_t>(i));
        st.bind(3, static_cast<std::int64_t>(period));
        st.bind(4, static_cast<std::int64_t>(values.size() / period));
        RC_ASSERT(st.step());
        if (values[i] == codec::k_null) {
            RC_ASSERT(st.is_null(0));
        } else {
            RC_ASSERT(static_cast<std::uint64_t>(st.int64(0)) == values[i]);
        }
        st.reset();
    }
}

RC_GTEST_PROP(CodecProperty, SlottedStreamsAgreeInCppAndSql, ()) {
    // Some slots steady, the others changing, over whole ticks: the slotted form.
    const auto period = *rc::gen::inRange<std::size_t>(2, 6);
    const auto ticks = *rc::gen::inRange<std::size_t>(1, 10);
    const auto steady = *rc::gen::container<std::vector<bool>>(period, rc::gen::arbitrary<bool>());
    const auto values = *rc::gen::container<std::vector<std::uint64_t>>(
        period * ticks, rc::gen::oneOf(rc::gen::inRange<std::uint64_t>(0, 200),
                                       rc::gen::inRange<std::uint64_t>(0, 1ULL << 62),
                                       rc::gen::just(codec::k_null)));
    std::vector<std::uint64_t> stream = values;
    for (std::size_t i = 0; i < stream.size(); ++i) {
        if (steady[i % period]) {
            stream[i] = values[i % period];
        }
    }
    codec::StreamWriter w;
    w.clear(period);
    for (std::uint64_t v : stream) {
        w.append(v);
    }
    std::vector<std::uint64_t> out;
    RC_ASSERT(codec::decode(w.text(), stream.size(), period, out));
    RC_ASSERT(out == stream);
    Database db(":memory:", OpenMode::create);
    Statement st = db.prepare(fmt::format("SELECT {}", codec::value_sql("?1", "?2", "?3", "?4")));
    for (std::size_t i = 0; i < stream.size(); ++i) {
        st.bind(1, std::string_view(w.text()));
        st.bind(2, static_cast<std::int64_t>(i));
        st.bind(3, static_cast<std::int64_t>(period));
        st.bind(4, static_cast<std::int64_t>(ticks));
        RC_ASSERT(st.step());
        if (stream[i] == codec::k_null) {
            RC_ASSERT(st.is_null(0));
        } else {
            RC_ASSERT(static_cast<std::uint64_t>(st.int64(0)) == stream[i]);
        }
        st.reset();
    }
}

} // namespace
} // namespace gua::store
