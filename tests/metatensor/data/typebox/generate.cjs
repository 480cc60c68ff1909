// Regenerates the TypeBox schemas of this folder (see README.md). Every file
// is JSON.stringify of a schema exactly as @sinclair/typebox builds it: the
// C++ tests read them to check that the metatensor dialect accepts what
// TypeBox emits (draft-07 tuples, Type.Module roots, annotations).
//
//   npm install --prefix /tmp/tb @sinclair/typebox@0.34.52
//   NODE_PATH=/tmp/tb/node_modules node generate.cjs [OUTDIR]
'use strict'
const fs = require('fs')
const path = require('path')
const { Type } = require('@sinclair/typebox')

const out = process.argv[2] || __dirname
const write = (name, schema) =>
  fs.writeFileSync(path.join(out, name), JSON.stringify(schema, null, 2) + '\n')

// Scalar leaves of the dialect: ordinary TypeBox options carrying TypeDef: keywords.
const F32 = (o = {}) => Type.Number({ 'TypeDef:Float32': true, ...o })
const U32 = (o = {}) => Type.Integer({ 'TypeDef:Uint32': true, ...o })
const I64 = (o = {}) => Type.Integer({ 'TypeDef:Int64': true, ...o })

// --- Item 3: data schemas (the dialect of the metatensor file format) ------

// Records with draft-07 tuples (Type.Tuple) and annotation keys.
const Particle = Type.Object(
  {
    id: U32({ description: 'particle id', examples: [7] }),
    pos: Type.Tuple([F32(), F32(), F32()], { title: 'position' }),
    span: Type.Tuple([I64(), F32({ minimum: 0 })]),
    mass: F32({ minimum: 0, default: 1, readOnly: true }),
  },
  { 'TypeDef:Struct': true, $id: 'Particle', title: 'Particle', additionalProperties: false },
)
write(
  'particles_tuple.json',
  Type.Object(
    {
      particles: Type.Array(Particle, { description: 'one record per particle' }),
      // A flat tensor whose rows are fixed arrays written as a tuple-free array.
      grid: Type.Array(Type.Array(F32(), { minItems: 2, maxItems: 2 })),
    },
    { title: 'Particles', description: 'authored with TypeBox', $comment: 'test data' },
  ),
)

// The same file as a module: the root is {"$defs": {...}, "$ref": "File"}.
const Mod = Type.Module({
  Vec3: Type.Tuple([F32(), F32(), F32()]),
  Particle: Type.Object(
    { id: U32(), pos: Type.Ref('Vec3'), mass: F32({ minimum: 0 }) },
    { 'TypeDef:Struct': true },
  ),
  File: Type.Object({ particles: Type.Array(Type.Ref('Particle')) }, { additionalProperties: false }),
})
write('module_particles.json', Mod.Import('File'))

// --- Item 4: header schemas (the concept paper's TensorRef / Layer / Model) --

// As written in the concept paper: a safetensors header entry.
const TensorRef = Type.Object({
  dtype: Type.Union([Type.Literal('F32'), Type.Literal('I16')]),
  shape: Type.Array(Type.Number()),
  data_offsets: Type.Tuple([Type.Number(), Type.Number()]),
})
const Layer = Type.Object({
  weight: TensorRef,
  bias: TensorRef,
  running_mean: TensorRef,
  running_var: TensorRef,
})
const Model = Type.Object({ conv1: Layer, conv2: Layer }, { additionalProperties: false })
write('concept_model.json', Model)

// The same model as a TypeBox module, imported: a root $ref into $defs.
const ModelModule = Type.Module({
  TensorRef: Type.Object({
    dtype: Type.Union([Type.Literal('F32'), Type.Literal('I16')]),
    shape: Type.Array(Type.Number()),
    data_offsets: Type.Tuple([Type.Number(), Type.Number()]),
  }),
  Layer: Type.Object({
    weight: Type.Ref('TensorRef'),
    bias: Type.Ref('TensorRef'),
    running_mean: Type.Ref('TensorRef'),
    running_var: Type.Ref('TensorRef'),
  }),
  Model: Type.Object({ conv1: Type.Ref('Layer'), conv2: Type.Ref('Layer') }, { additionalProperties: false }),
})
write('concept_module.json', ModelModule.Import('Model'))

// Exact shapes: dtype by Literal (const), shape by a tuple of Literals.
const Exact = (dtype, shape) =>
  Type.Object(
    {
      dtype: Type.Literal(dtype),
      shape: Type.Tuple(shape.map((d) => Type.Literal(d))),
      data_offsets: Type.Tuple([Type.Integer(), Type.Integer()]),
    },
    { additionalProperties: false },
  )
write(
  'exact_model.json',
  Type.Object(
    {
      conv1: Type.Object(
        { weight: Exact('F32', [20, 1, 5, 5]), bias: Exact('F32', [20]) },
        { additionalProperties: false },
      ),
      fc: Type.Object({
        weight: Exact('F32', [10, 20]),
        // Optional, any 1-D shape of at most 10 elements.
        bias: Type.Optional(
          Type.Object({
            dtype: Type.Literal('F32'),
            shape: Type.Array(Type.Integer({ maximum: 10 }), { minItems: 1, maxItems: 1 }),
            data_offsets: Type.Tuple([Type.Integer(), Type.Integer()]),
          }),
        ),
      }),
    },
    { additionalProperties: false },
  ),
)

// The package's exports hide package.json: read it next to the resolved entry.
const entry = require.resolve('@sinclair/typebox')
let dir = path.dirname(entry)
while (!fs.existsSync(path.join(dir, 'package.json')) || !/typebox$/.test(dir)) dir = path.dirname(dir)
const version = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).version
fs.writeFileSync(path.join(out, 'TYPEBOX_VERSION'), version + '\n')
