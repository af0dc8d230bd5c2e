// The ns-3 twin of a dcemu run (docs/ns3.md): the same fabric, flows and transport settings, run in
// ns-3 3.37 with its own TCP (DCTCP or NewReno), point-to-point links and RED queues, so that dcemu's
// baseline is checked against code written outside this project.
//
//   twin <input.txt> <out-dir>
//
// The input is what `dcemu experiment ns3-crosscheck` writes from a dcemu results folder (its
// topology.json, scenario.json and flows.csv; orchestrator/ns3/twin.ts, twinInput), one item per line:
//
//   seed <n>
//   end_ns <ns>                 virtual time the run ends (flows still running then are unfinished)
//   sample_ns <ns>              queue sampling period (0: none)
//   tcp <dctcp|reno> <initCwnd frames> <g> <minRto ns> <dupAcks> <mss bytes>
//   rwnd <bytes>                the receive window (0: none, a buffer no flow fills)
//   host <qdisc> <sndbuf> <tsq> <cwnd-validation>
//                               the host stack (dcemu's `host:`): the NIC's qdisc (fq_codel, fq,
//                               pfifo_fast, prio), the send buffer (bytes, 0: none), TCP small queues'
//                               cap (bytes, 0: off) and whether the window grows only while it limits
//   node <name> <host|switch>
//   link <a> <a port> <b> <b port> <rate bit/s> <propagation ns>
//   egress <node> <port> <buffer bytes> <ecn threshold bytes, 0: none>
//   flow <id> <src> <dst> <size bytes> <start ns>
//   option <name> <value>       ablations: delack (ACK every n segments), device-queue (under the queue
//                               disc, e.g. 1p), rate-scale (link rate factor), ecn-offset (bytes added
//                               to the marking threshold), sndbuf, sack, limited-transmit, recovery
//                               (prr or classic), first-rto (dcemu or handshake), dctcp-floor (1: ssthresh
//                               at least 2 segments, as Linux and dcemu; 0: ns-3's own DCTCP), window
//                               (rcvbuf: rwnd is the receive buffer; sndbuf: the send buffer)
//
// It writes, in dcemu's formats: flows.csv (id,src,dst,size,start_ns,finish_ns,fct_ns,retransmits,
// timeouts,received: in order at the application, arrived: every data byte that reached the receiver),
// queues.csv (node,port,peer,t_ns,bytes: switch egress ports, what the queue disc and the
// device hold) and ports.csv (node,port,peer,marks,drops,tx_packets). Where a dcemu setting has no ns-3
// counterpart, it says so on stderr, one line each ("twin: differs: ...").
//
// Matched: link rates (scaled by 1502/1500 so that a full frame, 1460 bytes of payload + 40 of TCP/IP
// + ns-3's 2-byte PPP header, serializes as long as dcemu's 1500-byte frame), propagation delays, byte
// buffers with DCTCP's step marking (RED with MinTh = MaxTh = K bytes, QW = 1, Gentle off, marking
// instead of dropping above MaxTh, drop-tail at the buffer), a device queue of one packet under the
// queue disc (what dcemu commits ahead), the initial window, the minimum RTO (clock granularity 1 ns),
// one ACK per segment, no SACK, no timestamps, DCTCP's g and its 2-segment floor (Linux's, which ns-3
// lacks), the duplicate-ACK threshold, buffers large
// enough that the receive window never limits (dcemu has none). Connections are opened 1 ms before the
// first flow and data starts at each flow's own start time, so no handshake is in an FCT (dcemu has
// none), and the first RTO is 5 x the minimum until the first data ACK's RTT sample, which starts a fresh
// estimator, as dcemu's (the handshake's sample is kept out of it).
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

using namespace ns3;

namespace {

struct LinkSpec {
  std::string a, b;
  int aPort, bPort;
  double rateBps;
  int64_t propNs;
};

struct EgressSpec {
  uint64_t buffer = 0;
  uint64_t ecn = 0;
};

struct FlowSpec {
  int id;
  std::string src, dst;
  uint64_t size;
  int64_t startNs;
  // results
  uint64_t received = 0;
  uint64_t arrived = 0;
  int64_t finishNs = -1;
  uint32_t retransmits = 0;
  uint32_t timeouts = 0;
  uint32_t highestSent = 0;
  Ptr<Socket> tx;
  uint64_t queued = 0;
};

struct Port {
  std::string node, peer;
  int index;
  Ptr<NetDevice> dev;
  Ptr<QueueDisc> qdisc;
  bool isSwitch;
};

std::map<std::string, Ptr<Node>> nodes;
std::map<std::string, std::string> roles;
std::vector<LinkSpec> links;
std::map<std::pair<std::string, int>, EgressSpec> egress;
std::vector<FlowSpec> flows;
std::map<std::string, std::string> options;
std::vector<Port> ports;
std::string cc = "dctcp";
int initCwnd = 10, dupAcks = 3, mss = 1460;
double g = 1.0 / 16;
int64_t minRtoNs = 200000, endNs = 0, sampleNs = 0, rwnd = 0;
// the host stack: dcemu's default is Linux's (fq_codel, a 4 MiB send buffer, TSQ at 1 MiB); an input
// without a `host` line is from a run before the stack was modelled (no limits, a FIFO)
std::string qdisc = "prio";
uint64_t sndbuf = 0, tsq = 0;
int cwndValidation = 0;
uint32_t seed = 1;
std::ofstream queueOut;
const int64_t OFFSET_NS = 1000000;  // connections open in [0, 1 ms); dcemu's time 0 is ns-3's 1 ms

std::string opt(const std::string& k, const std::string& d) {
  auto it = options.find(k);
  return it == options.end() ? d : it->second;
}

void differs(const std::string& what) { std::cerr << "twin: differs: " << what << "\n"; }

void ReadInput(const char* file) {
  std::ifstream in(file);
  if (!in) {
    std::cerr << "twin: cannot read " << file << "\n";
    std::exit(2);
  }
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    n++;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream s(line);
    std::string kind;
    s >> kind;
    if (kind == "seed") s >> seed;
    else if (kind == "end_ns") s >> endNs;
    else if (kind == "sample_ns") s >> sampleNs;
    else if (kind == "tcp") s >> cc >> initCwnd >> g >> minRtoNs >> dupAcks >> mss;
    else if (kind == "rwnd") s >> rwnd;
    else if (kind == "host") s >> qdisc >> sndbuf >> tsq >> cwndValidation;
    else if (kind == "node") {
      std::string name, role;
      s >> name >> role;
      nodes[name] = CreateObject<Node>();
      roles[name] = role;
    } else if (kind == "link") {
      LinkSpec l;
      s >> l.a >> l.aPort >> l.b >> l.bPort >> l.rateBps >> l.propNs;
      links.push_back(l);
    } else if (kind == "egress") {
      std::string node;
      int port;
      EgressSpec e;
      s >> node >> port >> e.buffer >> e.ecn;
      egress[{node, port}] = e;
    } else if (kind == "flow") {
      FlowSpec f;
      s >> f.id >> f.src >> f.dst >> f.size >> f.startNs;
      flows.push_back(f);
    } else if (kind == "option") {
      std::string k, v;
      s >> k >> v;
      options[k] = v;
    } else {
      std::cerr << "twin: " << file << ":" << n << ": unknown line '" << kind << "'\n";
      std::exit(2);
    }
    if (s.fail()) {
      std::cerr << "twin: " << file << ":" << n << ": malformed '" << kind << "' line\n";
      std::exit(2);
    }
  }
}

// Per-flow state by the socket that carries it.
std::map<Ptr<Socket>, FlowSpec*> bySender, byReceiver;

void SendMore(FlowSpec* f) {
  // the application hands TCP what its buffer takes, as a bulk sender does
  while (f->queued < f->size) {
    uint32_t room = f->tx->GetTxAvailable();
    if (room == 0) return;
    uint32_t n = std::min<uint64_t>(room, f->size - f->queued);
    int sent = f->tx->Send(Create<Packet>(n));
    if (sent <= 0) return;
    f->queued += sent;
  }
}

void OnSendSpace(Ptr<Socket> s, uint32_t) {
  auto it = bySender.find(s);
  if (it != bySender.end() && Simulator::Now().GetNanoSeconds() >= it->second->startNs + OFFSET_NS)
    SendMore(it->second);
}

void OnTx(FlowSpec* f, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>) {
  if (p->GetSize() == 0) return;
  uint32_t seq = h.GetSequenceNumber().GetValue();
  if (seq < f->highestSent) f->retransmits++;
  else f->highestSent = seq + p->GetSize();
}

void OnCongState(FlowSpec* f, TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now) {
  if (now == TcpSocketState::CA_LOSS) f->timeouts++;
}

// every data segment that reaches the receiver, in order or not, a duplicate too: what dcemu's hosts
// count as delivered (the application's in-order count lags it by the holes a loss leaves)
void OnArrive(FlowSpec* f, Ptr<const Packet> p, const TcpHeader&, Ptr<const TcpSocketBase>) {
  f->arrived += p->GetSize();
}

void OnRecv(Ptr<Socket> s) {
  Ptr<Packet> p;
  Address from;
  while ((p = s->RecvFrom(from))) {
    auto it = byReceiver.find(s);
    if (it == byReceiver.end()) continue;
    FlowSpec* f = it->second;
    f->received += p->GetSize();
    if (f->received >= f->size && f->finishNs < 0)
      f->finishNs = Simulator::Now().GetNanoSeconds() - OFFSET_NS;
  }
}

void SampleQueues() {
  int64_t t = Simulator::Now().GetNanoSeconds() - OFFSET_NS;
  if (t >= 0) {
    for (auto& p : ports) {
      if (!p.isSwitch) continue;
      uint32_t bytes = p.qdisc ? p.qdisc->GetNBytes() : 0;
      auto dev = DynamicCast<PointToPointNetDevice>(p.dev);
      bytes += dev->GetQueue()->GetNBytes();
      queueOut << p.node << "," << p.index << "," << p.peer << "," << t << "," << bytes << "\n";
    }
  }
  if (t + sampleNs < endNs) Simulator::Schedule(NanoSeconds(sampleNs), &SampleQueues);
}

}  // namespace

// ns-3 3.37's DCTCP sets ssthresh to (1 - alpha / 2) x cwnd with no floor, so under steady marking a
// window halves below one segment and the flow stalls until its RTO. Linux's dctcp_ssthresh keeps at
// least 2 segments, and so does dcemu; the twin's DCTCP is ns-3's with that floor (option dctcp-floor 0:
// ns-3's own, an ablation).
class TwinDctcp : public TcpDctcp {
 public:
  static TypeId GetTypeId() {
    static TypeId tid =
        TypeId("ns3::TwinDctcp").SetParent<TcpDctcp>().SetGroupName("Internet").AddConstructor<TwinDctcp>();
    return tid;
  }
  std::string GetName() const override { return "TwinDctcp"; }
  uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override {
    return std::max(2 * tcb->m_segmentSize, TcpDctcp::GetSsThresh(tcb, bytesInFlight));
  }
  Ptr<TcpCongestionOps> Fork() override { return CopyObject<TwinDctcp>(this); }
};
NS_OBJECT_ENSURE_REGISTERED(TwinDctcp);

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: twin <input.txt> <out-dir>\n";
    return 2;
  }
  ReadInput(argv[1]);
  std::string out = argv[2];
  RngSeedManager::SetSeed(1);
  RngSeedManager::SetRun(seed);

  // TCP as dcemu's baseline transport has it
  Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                     StringValue(cc != "dctcp"                       ? "ns3::TcpNewReno"
                                 : opt("dctcp-floor", "1") == "1" ? "ns3::TwinDctcp"
                                                                  : "ns3::TcpDctcp"));
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
  Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(initCwnd));
  Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(std::stoi(opt("delack", "1"))));
  // dcemu's window is whole frames: floor(rwnd / MSS) of them
  const uint32_t window = uint32_t(rwnd / mss * mss);
  // `window sndbuf`: the window as the sender's buffer instead (in flight and unsent <= window, as a
  // receive window of that size keeps in flight with an application that reads at once). ns-3 3.37
  // crashes (SIGSEGV in TcpRateLinux::SkbSent) with a receive window on a rack of 80 Reno flows.
  const bool windowAsSndbuf = rwnd > 0 && opt("window", "rcvbuf") == "sndbuf";
  // the send buffer as dcemu's host stack has it (none: 1 GiB, more than any flow here sends at once)
  Config::SetDefault("ns3::TcpSocket::SndBufSize",
                     UintegerValue(windowAsSndbuf ? window
                                                  : std::stoul(opt("sndbuf", std::to_string(sndbuf > 0 ? sndbuf : 1ul << 30)))));
  Config::SetDefault("ns3::TcpSocket::RcvBufSize",
                     UintegerValue(rwnd > 0 && !windowAsSndbuf ? window : 1u << 26));
  if (windowAsSndbuf)
    differs("receive window: carried as the sender's buffer of the same size (option window sndbuf)");
  // dcemu's first RTO is 5 x the minimum, until the first RTT sample; ns-3's handshake takes a sample of
  // a few µs, which would put its first RTO at the minimum. So the connections open with a minimum of
  // 5 x, and each flow's data starts with the scenario's minimum (the RTO stays at 5 x until the first
  // data ACK's sample, as in dcemu). `first-rto handshake`: ns-3's own start (an ablation).
  const bool handshakeRto = opt("first-rto", "dcemu") == "handshake";
  Config::SetDefault("ns3::TcpSocketBase::MinRto",
                     TimeValue(NanoSeconds(handshakeRto ? minRtoNs : 5 * minRtoNs)));
  Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(NanoSeconds(1)));
  Config::SetDefault("ns3::RttEstimator::InitialEstimation", TimeValue(NanoSeconds(5 * minRtoNs)));
  Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(opt("sack", "0") == "1"));
  Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
  Config::SetDefault("ns3::TcpSocketBase::ReTxThreshold", UintegerValue(dupAcks));
  Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue(cc == "dctcp" ? "On" : "Off"));
  Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(opt("limited-transmit", "0") == "1"));
  // `recovery classic`: the window set to ssthresh at once on a loss or an ECE (dcemu's way), instead of
  // ns-3's default, proportional rate reduction (RFC 6937) spreading the cut over a round trip
  if (opt("recovery", "prr") == "classic")
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType", TypeIdValue(TcpClassicRecovery::GetTypeId()));
  Config::SetDefault("ns3::TcpDctcp::DctcpShiftG", DoubleValue(g));
  Config::SetDefault("ns3::TcpDctcp::DctcpAlphaOnInit", DoubleValue(1.0));
  if (tsq > 0)
    differs("TCP small queues: ns-3 3.37 has none; a flow's bytes in its NIC's qdisc are bounded by its send buffer only");
  if (cwndValidation)
    differs("cwnd validation: ns-3 3.37's window grows on every ACK, also while the send buffer limits the flow");
  if (qdisc == "fq")
    differs("host qdisc fq: ns-3 3.37 has no sch_fq; the twin's NICs run FqCoDel (its round robin, CoDel at 5 ms)");
  if (qdisc == "prio")
    differs("host qdisc prio: the twin's NICs are one FIFO; dcemu's serve ACKs and control frames first");
  differs("ACKs: ns-3's are 42 bytes on the wire (IP, TCP, PPP), dcemu's 64 (a minimum Ethernet frame)");
  differs("connections: ns-3 opens each with a handshake 1 ms before the traffic; dcemu has none");
  differs("RTO: both per RFC 6298, but ns-3 samples the RTT on every ACK, dcemu on one timed frame per round trip");

  InternetStackHelper stack;
  for (auto& [name, node] : nodes) stack.Install(node);

  // RED as DCTCP's marking: a step at K bytes on the instantaneous queue
  Config::SetDefault("ns3::RedQueueDisc::UseEcn", BooleanValue(true));
  Config::SetDefault("ns3::RedQueueDisc::UseHardDrop", BooleanValue(false));
  Config::SetDefault("ns3::RedQueueDisc::Gentle", BooleanValue(false));
  Config::SetDefault("ns3::RedQueueDisc::QW", DoubleValue(1.0));
  Config::SetDefault("ns3::RedQueueDisc::MeanPktSize", UintegerValue(1500));

  const double frameScale = std::stod(opt("rate-scale", "1.0013333333333334"));  // 1502 / 1500
  Ipv4AddressHelper addr;
  int subnet = 0;
  for (auto& l : links) {
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(uint64_t(l.rateBps * frameScale))));
    p2p.SetChannelAttribute("Delay", TimeValue(NanoSeconds(l.propNs)));
    p2p.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue(opt("device-queue", "1p")));
    NetDeviceContainer devs = p2p.Install(nodes[l.a], nodes[l.b]);
    for (int side = 0; side < 2; side++) {
      const std::string& node = side == 0 ? l.a : l.b;
      const std::string& peer = side == 0 ? l.b : l.a;
      int index = side == 0 ? l.aPort : l.bPort;
      EgressSpec e = egress[{node, index}];
      TrafficControlHelper tc;
      const bool isHost = roles[node] == "host";
      if (isHost && qdisc != "prio" && e.ecn > 0)
        differs("host NIC marking (ports.hostEcnThreshold): the twin's " + qdisc + " NICs mark by their own rules only");
      if (isHost && (qdisc == "fq_codel" || qdisc == "fq")) {
        // Linux's fq_codel as tc-fq_codel(8) gives it: 10,240 packets, 1,024 flows, ECN on, 5 ms / 100 ms
        tc.SetRootQueueDisc("ns3::FqCoDelQueueDisc", "MaxSize", StringValue("10240p"), "Flows", UintegerValue(1024),
                            "UseEcn", BooleanValue(true), "Target", StringValue("5ms"), "Interval",
                            StringValue("100ms"), "DropBatchSize", UintegerValue(64));
      } else if (isHost && qdisc == "pfifo_fast") {
        tc.SetRootQueueDisc("ns3::PfifoFastQueueDisc", "MaxSize", StringValue("1000p"));
      } else if (e.ecn > 0) {
        // `ecn-offset`: the threshold moved by this many bytes (an ablation of queue accounting)
        double k = double(e.ecn) + std::stod(opt("ecn-offset", "0"));
        tc.SetRootQueueDisc("ns3::RedQueueDisc", "MaxSize", StringValue(std::to_string(e.buffer) + "B"),
                            "MinTh", DoubleValue(k), "MaxTh", DoubleValue(k));
      } else {
        tc.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue(std::to_string(e.buffer) + "B"));
      }
      QueueDiscContainer q = tc.Install(devs.Get(side));
      // fq_codel's quantum: the device's MTU and link header, 1,514 bytes (psched_mtu)
      if (auto fq = DynamicCast<FqCoDelQueueDisc>(q.Get(0))) fq->SetQuantum(1514);
      ports.push_back({node, peer, index, devs.Get(side), q.Get(0), roles[node] == "switch"});
    }
    std::ostringstream base;
    base << "10." << (subnet / 256) << "." << (subnet % 256) << ".0";
    addr.SetBase(base.str().c_str(), "255.255.255.252");
    addr.Assign(devs);
    subnet++;
  }
  Ipv4GlobalRoutingHelper::PopulateRoutingTables();

  // each flow: a listening socket at its destination on a port of its own, a sender connected 1 ms
  // before the traffic, and data from the flow's start
  TypeId tcp = TcpSocketFactory::GetTypeId();
  if (flows.size() > 55535) {
    std::cerr << "twin: more than 55535 flows (one port each)\n";
    return 2;
  }
  for (size_t i = 0; i < flows.size(); i++) {
    FlowSpec* f = &flows[i];
    uint16_t port = uint16_t(10000 + i);
    Ptr<Socket> listen = Socket::CreateSocket(nodes[f->dst], tcp);
    listen->Bind(InetSocketAddress(Ipv4Address::GetAny(), port));
    listen->Listen();
    listen->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                              Callback<void, Ptr<Socket>, const Address&>([f](Ptr<Socket> s, const Address&) {
                                byReceiver[s] = f;
                                s->SetRecvCallback(MakeCallback(&OnRecv));
                                s->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnArrive, f));
                              }));
    Ipv4Address dstAddr = nodes[f->dst]->GetObject<Ipv4>()->GetAddress(1, 0).GetLocal();
    Ptr<Socket> tx = Socket::CreateSocket(nodes[f->src], tcp);
    f->tx = tx;
    bySender[tx] = f;
    tx->Bind();
    tx->SetSendCallback(MakeCallback(&OnSendSpace));
    tx->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnTx, f));
    tx->TraceConnectWithoutContext("CongState", MakeBoundCallback(&OnCongState, f));
    // the handshakes spread over the first half millisecond, well before any data
    Time open = NanoSeconds(int64_t(i) * (OFFSET_NS / 2) / int64_t(flows.size()));
    Simulator::Schedule(open, [tx, dstAddr, port]() { tx->Connect(InetSocketAddress(dstAddr, port)); });
    Simulator::Schedule(NanoSeconds(f->startNs + OFFSET_NS), [f, handshakeRto]() {
      f->tx->SetAttribute("MinRto", TimeValue(NanoSeconds(minRtoNs)));
      // a fresh estimator: the first data ACK's sample initializes it (srtt = R, rttvar = R / 2), as in
      // dcemu; the handshake's few-µs sample kept in it would pull the first RTOs far below the queue's delay
      if (!handshakeRto) DynamicCast<TcpSocketBase>(f->tx)->SetRtt(CreateObject<RttMeanDeviation>());
      SendMore(f);
    });
  }

  queueOut.open(out + "/queues.csv");
  queueOut << "node,port,peer,t_ns,bytes\n";
  if (sampleNs > 0) Simulator::Schedule(NanoSeconds(OFFSET_NS), &SampleQueues);
  Simulator::Stop(NanoSeconds(endNs + OFFSET_NS));
  Simulator::Run();

  std::ofstream fo(out + "/flows.csv");
  fo << "id,src,dst,size,start_ns,finish_ns,fct_ns,retransmits,timeouts,received,arrived\n";
  for (auto& f : flows) {
    fo << f.id << "," << f.src << "," << f.dst << "," << f.size << "," << f.startNs << ","
       << (f.finishNs >= 0 ? std::to_string(f.finishNs) : "") << ","
       << (f.finishNs >= 0 ? std::to_string(f.finishNs - f.startNs) : "") << "," << f.retransmits << ","
       << f.timeouts << "," << f.received << "," << f.arrived << "\n";
  }
  std::ofstream po(out + "/ports.csv");
  po << "node,port,peer,marks,drops,tx_packets\n";
  for (auto& p : ports) {
    const QueueDisc::Stats& s = p.qdisc->GetStats();
    po << p.node << "," << p.index << "," << p.peer << "," << s.nTotalMarkedPackets << ","
       << s.nTotalDroppedPackets << "," << s.nTotalDequeuedPackets << "\n";
  }
  Simulator::Destroy();
  return 0;
}
