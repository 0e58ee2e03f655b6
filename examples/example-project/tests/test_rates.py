import unittest

from quotes.rates import QuoteError, format_cents, load_rates, normalise_postcode, parcel_price, quote


class RatesTest(unittest.TestCase):
    def setUp(self):
        self.rates = load_rates()

    def test_a_band_limit_belongs_to_its_own_band(self):
        self.assertEqual(parcel_price(self.rates, 2000), 595)
        self.assertEqual(parcel_price(self.rates, 2001), 795)

    def test_too_heavy_or_weightless_parcels_are_refused(self):
        for weight in (0, -5, 20001):
            with self.assertRaises(QuoteError):
                parcel_price(self.rates, weight)

    def test_the_remote_surcharge_is_charged_once_per_order(self):
        order = quote(self.rates, [1500, 4000], "8899 ab")
        self.assertEqual(order["surcharge_cents"], 350)
        self.assertEqual(order["total_cents"], 595 + 795 + 350)

    def test_postcodes_match_with_or_without_a_space(self):
        self.assertEqual(normalise_postcode(" 9161 xa "), "9161XA")
        self.assertEqual(quote(self.rates, [100], "9161XA"), quote(self.rates, [100], "9161 xa"))

    def test_mainland_orders_carry_no_surcharge(self):
        self.assertEqual(quote(self.rates, [100], "1012 AB")["surcharge_cents"], 0)

    def test_money_is_formatted_from_whole_cents(self):
        self.assertEqual(format_cents(1740), "17.40")
        self.assertEqual(format_cents(5), "0.05")


if __name__ == "__main__":
    unittest.main()
