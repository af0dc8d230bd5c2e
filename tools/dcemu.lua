-- Wireshark / tshark dissector for dcemu packet captures (`run.capture`, docs/results.md#capture).
--
--   tshark -X lua_script:tools/dcemu.lua -r results/x/capture/leaf0-spine1.pcapng
--   wireshark -X lua_script:tools/dcemu.lua results/x/capture/leaf0-spine1.pcapng
--
-- (or copy it to ~/.local/lib/wireshark/plugins/). Every captured frame is Ethernet/IPv4/UDP to port
-- 47100 whose payload starts with the dcemu header, big-endian (core/capture.ts):
--
--   0  u8   version (1)
--   1  u8   kind: 0 data, 1 ack, 2 keepalive, 3 control, 4 ptp
--   2  u8   flags: bits 0-2 priority class, bits 3-4 ECN, bits 5-6 fate (sent, link down, lost, corrupted)
--   3  u8   extension length (255: 255 bytes or more)
--   4  u16  source node id (65535: none, a link-local frame)
--   6  u16  destination node id
--   8  u32  flow id
--  12  u32  sequence
--  16  u32  virtual size, bytes
--  20  u16  switch where the path turned down (0: not yet)
--  22  ...  extension: msgpack [source route, scheme header], when the frame has either
--
-- The rest of the payload is zeros up to the frame's virtual size. An extension that does not fit in
-- the captured bytes is in the packet's comment instead.

local DCEMU_PORT = 47100
local HEADER = 22

local dcemu = Proto("dcemu", "dcemu emulated frame")

local kinds = { [0] = "data", [1] = "ack", [2] = "keepalive", [3] = "control", [4] = "ptp" }
local ecns = { [0] = "Not-ECT", [1] = "ECT(1)", [2] = "ECT(0)", [3] = "CE" }
local fates = { [0] = "sent", [1] = "dropped: link down", [2] = "lost on the wire", [3] = "corrupted on the wire" }

local pf = {
  version = ProtoField.uint8("dcemu.version", "Version"),
  kind = ProtoField.uint8("dcemu.kind", "Kind", base.DEC, kinds),
  flags = ProtoField.uint8("dcemu.flags", "Flags", base.HEX),
  priority = ProtoField.uint8("dcemu.priority", "Priority class", base.DEC, nil, 0x07),
  ecn = ProtoField.uint8("dcemu.ecn", "ECN", base.DEC, ecns, 0x18),
  fate = ProtoField.uint8("dcemu.fate", "Fate", base.DEC, fates, 0x60),
  ext_length = ProtoField.uint8("dcemu.ext_length", "Extension length"),
  src = ProtoField.uint16("dcemu.src", "Source node id"),
  dst = ProtoField.uint16("dcemu.dst", "Destination node id"),
  flow = ProtoField.uint32("dcemu.flow", "Flow id"),
  seq = ProtoField.uint32("dcemu.seq", "Sequence"),
  size = ProtoField.uint32("dcemu.size", "Virtual size (bytes)"),
  via = ProtoField.uint16("dcemu.via", "Path turned down at switch id"),
  route = ProtoField.string("dcemu.route", "Source route"),
  scheme = ProtoField.string("dcemu.scheme", "Scheme or transport header"),
}
dcemu.fields = {
  pf.version, pf.kind, pf.flags, pf.priority, pf.ecn, pf.fate, pf.ext_length, pf.src, pf.dst,
  pf.flow, pf.seq, pf.size, pf.via, pf.route, pf.scheme,
}

-- A small msgpack reader that renders one value as text, JSON-like. It raises an error on truncated
-- or unknown input; the caller catches it.
local render

local function need(tvb, o, n)
  if o + n > tvb:len() then error("truncated") end
end

local function seq(tvb, o, n, depth, map)
  local parts = {}
  for _ = 1, n do
    local k
    if map then
      k, o = render(tvb, o, depth + 1)
    end
    local v
    v, o = render(tvb, o, depth + 1)
    parts[#parts + 1] = map and (k .. ": " .. v) or v
  end
  local body = table.concat(parts, ", ")
  if map then return "{" .. body .. "}", o end
  return "[" .. body .. "]", o
end

render = function(tvb, o, depth)
  if depth > 16 then error("nested too deep") end
  need(tvb, o, 1)
  local b = tvb(o, 1):uint()
  o = o + 1
  local function uint(n)
    need(tvb, o, n)
    if n == 8 then return tostring(tvb(o, 8):uint64()), o + 8 end
    return tostring(tvb(o, n):uint()), o + n
  end
  local function int(n)
    need(tvb, o, n)
    if n == 8 then return tostring(tvb(o, 8):int64()), o + 8 end
    return tostring(tvb(o, n):int()), o + n
  end
  local function str(n)
    need(tvb, o, n)
    if n == 0 then return '""', o end
    return '"' .. tvb(o, n):string() .. '"', o + n
  end
  local function len(n)
    need(tvb, o, n)
    return tvb(o, n):uint(), o + n
  end
  if b <= 0x7f then return tostring(b), o end
  if b >= 0xe0 then return tostring(b - 256), o end
  if b >= 0x80 and b <= 0x8f then return seq(tvb, o, b - 0x80, depth, true) end
  if b >= 0x90 and b <= 0x9f then return seq(tvb, o, b - 0x90, depth, false) end
  if b >= 0xa0 and b <= 0xbf then return str(b - 0xa0) end
  if b == 0xc0 then return "null", o end
  if b == 0xc2 then return "false", o end
  if b == 0xc3 then return "true", o end
  if b == 0xca then need(tvb, o, 4) return tostring(tvb(o, 4):float()), o + 4 end
  if b == 0xcb then need(tvb, o, 8) return tostring(tvb(o, 8):float()), o + 8 end
  if b >= 0xcc and b <= 0xcf then return uint(2 ^ (b - 0xcc)) end
  if b >= 0xd0 and b <= 0xd3 then return int(2 ^ (b - 0xd0)) end
  if b >= 0xd9 and b <= 0xdb then
    local n
    n, o = len(2 ^ (b - 0xd9))
    return str(n)
  end
  if b >= 0xc4 and b <= 0xc6 then
    local n
    n, o = len(2 ^ (b - 0xc4))
    need(tvb, o, n)
    return "<" .. n .. " bytes>", o + n
  end
  if b == 0xdc or b == 0xdd then
    local n
    n, o = len(b == 0xdc and 2 or 4)
    return seq(tvb, o, n, depth, false)
  end
  if b == 0xde or b == 0xdf then
    local n
    n, o = len(b == 0xde and 2 or 4)
    return seq(tvb, o, n, depth, true)
  end
  error(string.format("msgpack type 0x%02x", b))
end

-- The extension: a msgpack array [route, scheme header].
local function extension(tvb, o)
  need(tvb, o, 1)
  local b = tvb(o, 1):uint()
  if b ~= 0x92 then error("not a [route, scheme] pair") end
  local route, scheme
  route, o = render(tvb, o + 1, 1)
  local at = o
  scheme, o = render(tvb, o, 1)
  return route, scheme, at, o
end

function dcemu.dissector(tvb, pinfo, tree)
  if tvb:len() < HEADER then return 0 end
  pinfo.cols.protocol = "DCEMU"
  local ext_len = tvb(3, 1):uint()
  local t = tree:add(dcemu, tvb(0, HEADER), "dcemu emulated frame")
  t:add(pf.version, tvb(0, 1))
  t:add(pf.kind, tvb(1, 1))
  local fl = t:add(pf.flags, tvb(2, 1))
  fl:add(pf.priority, tvb(2, 1))
  fl:add(pf.ecn, tvb(2, 1))
  fl:add(pf.fate, tvb(2, 1))
  t:add(pf.ext_length, tvb(3, 1))
  t:add(pf.src, tvb(4, 2))
  t:add(pf.dst, tvb(6, 2))
  t:add(pf.flow, tvb(8, 4))
  t:add(pf.seq, tvb(12, 4))
  t:add(pf.size, tvb(16, 4))
  t:add(pf.via, tvb(20, 2))

  local kind = tvb(1, 1):uint()
  local flags = tvb(2, 1):uint()
  local ecn = math.floor(flags / 8) % 4
  local fate = math.floor(flags / 32) % 4
  local info = string.format("%s %d -> %d flow %d seq %d size %d", kinds[kind] or ("kind " .. kind),
    tvb(4, 2):uint(), tvb(6, 2):uint(), tvb(8, 4):uint(), tvb(12, 4):uint(), tvb(16, 4):uint())
  if ecn == 3 then info = info .. " [CE]" end
  if fate ~= 0 then info = info .. " [" .. fates[fate] .. "]" end

  if ext_len > 0 then
    local ok, route, scheme, at, stop = pcall(extension, tvb, HEADER)
    if ok then
      t:set_len(stop)
      if route ~= "null" then t:add(pf.route, tvb(HEADER, at - HEADER), route) end
      if scheme ~= "null" then
        t:add(pf.scheme, tvb(at, stop - at), scheme)
        info = info .. " hdr=" .. scheme
      end
    else
      t:add_expert_info(PI_COMMENTS_GROUP, PI_NOTE,
        "route and scheme header not in the captured bytes (frame too small or snapped): see the packet comment")
    end
  end
  pinfo.cols.info:set(info)
  return tvb:len()
end

DissectorTable.get("udp.port"):add(DCEMU_PORT, dcemu)
