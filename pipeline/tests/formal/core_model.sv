    // The scheduler core as its contract (proven on the core by `core_contract.sv`, the JBSQ
    // core's by `jbsq_core_contract.sv`): the body of the datapath's `core` module in the
    // admission proof, below its port declarations. Any pass may leave, and any first pass come
    // back as its second pass, at any clock, within the contract (the test writes which second
    // passes may come back too, and the core's outputs beyond the contract's, free); what leaves
    // and what the stages did are free.
    localparam L = @CORE_LATENCY@;
    (* anyseq *) reg leave, again, leave_second, take_pkt, take_ctl;
    (* anyseq *) reg [@PHV_MSB@:0] any_out, any_trace;
    (* anyseq *) reg [63:0] any_rng;
    @FREE_DECLS@
    reg [7:0] n_first = 8'd0;
    reg [7:0] n_second = 8'd0;
    wire enter_first = (pkt_valid && take_pkt) || (ctl_valid && take_ctl);
    always @(*) begin
        pkt_ready = take_pkt;
        ctl_ready = take_ctl;
        out_valid = leave;
        out_again = again;
        out = any_out;
        trace_valid = enter_first || again;
        trace = any_trace;
        rng_state = any_rng;
        in_flight = n_first + n_second;
        @FREE_ASSIGNS@
        // One pass enters at a time; a second pass takes the entry slot.
        assume (!(pkt_valid && take_pkt && ctl_valid && take_ctl));
        if (again) assume (!take_pkt && !take_ctl);
        // A pass that comes back is a first pass leaving; a pass leaves only if one of its kind
        // is in.
        @AGAIN_RULE@
        if (leave) assume (leave_second ? n_second != 8'd0 : n_first != 8'd0);
        // At most L passes in the core.
        assume ({1'b0, n_first} + {1'b0, n_second} + {8'd0, enter_first} + {8'd0, again}
            - {8'd0, leave} <= L);
    end
    always @(posedge clock) begin
        n_second <= n_second + {7'd0, again} - {7'd0, leave && leave_second};
        n_first <= n_first + {7'd0, enter_first} - {7'd0, leave && !leave_second};
    end
