"""Checks that need no server: the asyncio client has the blocking client's surface, and
ServerStats has the fields of collide.v1.GetServerStatsResponse (both fail when one side changes
and the other does not); float32 values print as their shortest float32 decimal."""

from __future__ import annotations

import dataclasses
import decimal
import inspect
import math
import random
import struct
import typing
import unittest

from google.protobuf.descriptor import FieldDescriptor

import collide
import collide.aio
from collide import _convert as convert
from collide._pb import pb

# The blocking classes and their asyncio counterparts.
PAIRS = [
    (collide.Client, collide.aio.Client),
    (collide.UpdateWriter, collide.aio.UpdateWriter),
    (collide.QueryStream, collide.aio.QueryStream),
    (collide.Watch, collide.aio.Watch),
    (collide.Interest, collide.aio.Interest),
]

# The methods that stay plain functions on the asyncio classes (they neither wait nor do I/O):
# the rest are coroutines there.
NOT_COROUTINES = {
    (collide.aio.Client, "metadata"),
    (collide.aio.Client, "update_writer"),
    (collide.aio.Client, "query_stream"),
    (collide.aio.Client, "watch"),
    (collide.aio.Client, "interest"),
    (collide.aio.Client, "export_scene"),
    (collide.aio.Watch, "cancel"),
    (collide.aio.Interest, "cancel"),
}


def public_members(cls) -> typing.Dict[str, object]:
    """The public methods and properties of `cls`, by name (constructors included)."""
    members = {"__init__": cls.__dict__["__init__"]}
    for name, member in vars(cls).items():
        if not name.startswith("_") and (inspect.isfunction(member)
                                          or isinstance(member, property)):
            members[name] = member
    return members


class AioSurfaceTest(unittest.TestCase):

    def test_every_public_member_has_the_same_signature_on_both_clients(self) -> None:
        for blocking, aio in PAIRS:
            with self.subTest(cls=blocking.__name__):
                blocking_members = public_members(blocking)
                aio_members = public_members(aio)
                self.assertEqual(sorted(blocking_members), sorted(aio_members))
                for name, member in blocking_members.items():
                    other = aio_members[name]
                    if isinstance(member, property):
                        self.assertIsInstance(other, property, name)
                        self.assertEqual(inspect.signature(member.fget),
                                         inspect.signature(other.fget), name)
                        continue
                    # Parameters (names, kinds, defaults, annotations) and the result's type:
                    # the annotations are strings, "UpdateWriter" naming each module's own.
                    self.assertEqual(inspect.signature(member), inspect.signature(other), name)

    def test_the_asyncio_methods_are_coroutines_except_the_stream_openers(self) -> None:
        for blocking, aio in PAIRS:
            for name, member in public_members(aio).items():
                if isinstance(member, property) or name == "__init__":
                    continue
                with self.subTest(cls=aio.__name__, method=name):
                    self.assertFalse(inspect.iscoroutinefunction(public_members(blocking)[name]))
                    self.assertEqual(inspect.iscoroutinefunction(member),
                                     (aio, name) not in NOT_COROUTINES)

    def test_the_context_managers_and_iterators_are_asynchronous(self) -> None:
        for blocking, aio in PAIRS:
            with self.subTest(cls=aio.__name__):
                self.assertTrue(hasattr(blocking, "__enter__") and hasattr(blocking, "__exit__"))
                self.assertTrue(inspect.iscoroutinefunction(aio.__aenter__))
                self.assertTrue(inspect.iscoroutinefunction(aio.__aexit__))
        self.assertTrue(hasattr(collide.Watch, "__next__"))
        self.assertTrue(inspect.iscoroutinefunction(collide.aio.Watch.__anext__))


# A protobuf scalar field's Python type.
SCALAR_TYPES = {
    FieldDescriptor.CPPTYPE_INT32: int, FieldDescriptor.CPPTYPE_INT64: int,
    FieldDescriptor.CPPTYPE_UINT32: int, FieldDescriptor.CPPTYPE_UINT64: int,
    FieldDescriptor.CPPTYPE_DOUBLE: float, FieldDescriptor.CPPTYPE_FLOAT: float,
    FieldDescriptor.CPPTYPE_BOOL: bool, FieldDescriptor.CPPTYPE_STRING: str,
    FieldDescriptor.CPPTYPE_ENUM: int,
}


def fill(message, counter: typing.List[int]) -> None:
    """Sets every field of `message`, nested ones too, to a value no other field has (two
    elements per repeated field)."""
    for field in message.DESCRIPTOR.fields:
        repeated = field.label == FieldDescriptor.LABEL_REPEATED
        for _ in range(2 if repeated else 1):
            counter[0] += 1
            if field.cpp_type == FieldDescriptor.CPPTYPE_MESSAGE:
                target = (getattr(message, field.name).add() if repeated
                          else getattr(message, field.name))
                fill(target, counter)
                continue
            kind = SCALAR_TYPES[field.cpp_type]
            if kind is bool:
                value = counter[0] % 2 == 1
            elif kind is str:
                value = f"text {counter[0]}"
            elif field.cpp_type == FieldDescriptor.CPPTYPE_ENUM:
                values = field.enum_type.values
                value = values[counter[0] % len(values)].number
            else:
                value = kind(counter[0])
            if repeated:
                getattr(message, field.name).append(value)
            else:
                setattr(message, field.name, value)


class ServerStatsDriftTest(unittest.TestCase):

    def assertMatches(self, cls, descriptor) -> None:
        """`cls` has the fields of `descriptor`, in order, with matching types (nested messages:
        dataclasses matching them; repeated fields: lists)."""
        self.assertTrue(dataclasses.is_dataclass(cls), cls)
        hints = typing.get_type_hints(cls)
        self.assertEqual([f.name for f in dataclasses.fields(cls)],
                         [f.name for f in descriptor.fields],
                         f"{cls.__name__} and {descriptor.full_name} have different fields")
        for field in descriptor.fields:
            with self.subTest(field=f"{descriptor.full_name}.{field.name}"):
                kind = hints[field.name]
                if field.label == FieldDescriptor.LABEL_REPEATED:
                    self.assertIs(typing.get_origin(kind), list, kind)
                    (kind,) = typing.get_args(kind)
                if field.cpp_type == FieldDescriptor.CPPTYPE_MESSAGE:
                    self.assertMatches(kind, field.message_type)
                else:
                    self.assertIs(kind, SCALAR_TYPES[field.cpp_type])

    def assertReadAs(self, value, message) -> None:
        """`value` (a dataclass) holds what `message` holds, field by field."""
        for field in message.DESCRIPTOR.fields:
            got = getattr(value, field.name)
            want = getattr(message, field.name)
            if field.cpp_type != FieldDescriptor.CPPTYPE_MESSAGE:
                self.assertEqual(got, list(want) if isinstance(got, list) else want, field.name)
            elif field.label == FieldDescriptor.LABEL_REPEATED:
                self.assertEqual(len(got), len(want), field.name)
                for item, item_message in zip(got, want):
                    self.assertReadAs(item, item_message)
            else:
                self.assertReadAs(got, want)

    def test_the_dataclass_has_every_field_of_the_message(self) -> None:
        self.assertMatches(collide.ServerStats, pb.GetServerStatsResponse.DESCRIPTOR)

    def test_every_field_is_read(self) -> None:
        message = pb.GetServerStatsResponse()
        fill(message, [0])
        self.assertReadAs(convert.server_stats(message), message)
        # And an empty message reads as the defaults.
        self.assertReadAs(convert.server_stats(pb.GetServerStatsResponse()),
                          pb.GetServerStatsResponse())



def as_float32(value: float) -> float:
    """`value` rounded to float32."""
    return struct.unpack("<f", struct.pack("<f", value))[0]


def float32_neighbours(value: float):
    """The float32 values just below and above `value` (a finite, nonzero float32)."""
    bits = struct.unpack("<I", struct.pack("<f", abs(value)))[0]
    below = struct.unpack("<f", struct.pack("<I", bits - 1))[0] if bits > 0 else 0.0
    above = struct.unpack("<f", struct.pack("<I", bits + 1))[0]
    return below, above


def shortest_inside(value: float) -> int:
    """The fewest significant digits of a decimal strictly between the midpoints from `value` to
    its float32 neighbours: the oracle, by interval, of the shortest text."""
    with decimal.localcontext() as context:
        context.prec = 200  # exact for every float32 and their midpoints
        return _shortest_inside(value)


def _shortest_inside(value: float) -> int:
    below, above = float32_neighbours(value)
    exact = decimal.Decimal(abs(value))
    low = (exact + decimal.Decimal(below)) / 2
    high = (exact + decimal.Decimal(above)) / 2
    for digits in range(1, 12):
        # The smallest multiple of the digit's unit above `low` (at `digits` significant digits).
        unit = decimal.Decimal(1).scaleb(exact.adjusted() - digits + 1)
        candidate = (low / unit).to_integral_value(rounding=decimal.ROUND_FLOOR) * unit + unit
        if low < candidate < high:
            return digits
    raise AssertionError(f"no decimal inside the interval of {value}")


class Float32TextTest(unittest.TestCase):
    SEED = 2811

    def test_random_float32_values_print_shortest_and_read_back_exactly(self) -> None:
        rng = random.Random(self.SEED)
        for case in range(20000):
            exponent = rng.uniform(-40, 38)
            value = as_float32(rng.choice((-1, 1)) * rng.random() * 10.0 ** exponent)
            text = collide.model.float32_text(value)
            with self.subTest(seed=self.SEED, case=case, value=value):
                # Reads back as the same float32 ...
                self.assertEqual(as_float32(float(text)), value)
                # ... with no more significant digits than the shortest decimal strictly inside
                # the value's float32 rounding interval (found with exact decimal arithmetic).
                digits = len(text.split("e")[0].replace("-", "").replace(".", "").strip("0"))
                self.assertLessEqual(digits, shortest_inside(value))

    def test_edge_values(self) -> None:
        text = collide.model.float32_text
        self.assertEqual(text(as_float32(0.1)), "0.1")
        self.assertEqual(text(as_float32(0.7071068)), "0.7071068")
        self.assertEqual(text(0.0), "0.0")
        self.assertEqual(text(-0.0), "-0.0")
        self.assertEqual(text(1.0), "1.0")
        self.assertEqual(text(as_float32(1e9)), "1000000000.0")
        self.assertEqual(text(as_float32(3.4028234663852886e38)), "3.4028235e+38")
        self.assertEqual(text(1.401298464324817e-45), "1e-45")  # the smallest subnormal
        self.assertEqual(text(math.inf), "inf")
        self.assertTrue(math.isnan(float(text(math.nan))))
        value = collide.Float32(as_float32(0.1))
        self.assertEqual((repr(value), str(value), f"{value}", f"{value:.3f}"),
                         ("0.1", "0.1", "0.1", "0.100"))
        self.assertEqual(value, 0.10000000149011612)
        self.assertEqual(repr(collide.SceneOptions(fat_margin=value)),
                         "SceneOptions(fat_margin=0.1, max_bodies=None, "
                         "durability=<Durability.DEFAULT: 0>, history_ticks=None)")


if __name__ == "__main__":
    unittest.main()
