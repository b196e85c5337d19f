package dev.collide.client;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;

/** How the clients print the float32 fields the server sends. */
public final class Float32 {
  private Float32() {}

  /**
   * The shortest decimal that reads back as {@code value} (0.1, not 0.10000000149011612), as a
   * plain JSON number (no exponent); of two such decimals, the nearer, and at a tie the even one
   * (1703448.25f is 1703448.2), as C++'s std::to_chars, Go, Python and Node choose. NaN and the
   * infinities print as Java does.
   */
  public static String shortest(float value) {
    if (Float.isNaN(value) || Float.isInfinite(value)) {
      return Float.toString(value);
    }
    if (value == 0) {
      return (Float.floatToRawIntBits(value) < 0) ? "-0" : "0";
    }
    BigDecimal exact = new BigDecimal(value);
    for (int digits = 1; digits <= 9; digits++) {
      BigDecimal rounded = exact.round(new MathContext(digits, RoundingMode.HALF_EVEN));
      if (rounded.floatValue() == value) {
        return rounded.stripTrailingZeros().toPlainString();
      }
    }
    return exact.round(new MathContext(9, RoundingMode.HALF_EVEN)).stripTrailingZeros()
        .toPlainString();
  }
}
