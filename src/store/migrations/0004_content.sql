-- Reserved for the public content issue (verticals, landing pages, pricing, rates). Empty until it lands.
SELECT 1;
