"""Checks that need no server: the asyncio client has the blocking client's surface, and
ServerStats has the fields of collide.v1.GetServerStatsResponse (both fail when one side changes
and the other does not)."""

from __future__ import annotations

import dataclasses
import inspect
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


if __name__ == "__main__":
    unittest.main()
